/** History import (docs/domain.md §Importing history): the streaming parser and its types. */
export { parseProtocolLine, protocolInstant } from './lineProtocol.ts';
export { DEFAULT_DEDUP_WINDOW, HistoryParser, parseHistory } from './parser.ts';
export type {
  ClockOptions,
  ColumnRef,
  CsvMapping,
  CsvValueMapping,
  EnergyUnit,
  HistoryBatch,
  HistoryImportOptions,
  HistoryRowError,
  HistorySummary,
  IntervalOptions,
  LineProtocolFieldMapping,
  LineProtocolMapping,
  StampFormat,
  ValueKind,
} from './types.ts';
export { HistoryImportError } from './types.ts';

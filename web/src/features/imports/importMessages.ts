/**
 * Server messages of imports in the active language. Fixed ones are in the catalogue word for word
 * (`translateServerMessage`); those that carry a detail ("The import cannot start: …", the size limit)
 * are matched by their fixed part, the detail — a parser's English reason — kept as the server wrote it.
 */
import type { MessageId } from '../../i18n/i18n.ts';

type T = (id: MessageId, values?: Record<string, unknown>) => string;

const PREFIXED: readonly [string, MessageId][] = [
  ['The import cannot start: ', 'imports.server.cannotStart'],
  ['The file cannot be imported: ', 'imports.server.cannotImport'],
];

const TOO_LARGE = /^The file is larger than the import limit of (.+) \(KW_IMPORT_MAX_BYTES\)\.$/;

export function importMessage(t: T, translate: (m: string) => string, message: string): string {
  const exact = translate(message);
  if (exact !== message) return exact;
  for (const [prefix, id] of PREFIXED)
    if (message.startsWith(prefix)) return t(id, { detail: message.slice(prefix.length) });
  const large = TOO_LARGE.exec(message);
  if (large) return t('imports.server.tooLarge', { limit: large[1] });
  return message;
}

/** Share of the file read so far, 0–100, from the bytes the server reports and the file's size. */
export function percentRead(bytesRead: number, size: number): number {
  if (!(size > 0)) return 0;
  return Math.max(0, Math.min(100, Math.round((bytesRead / size) * 100)));
}

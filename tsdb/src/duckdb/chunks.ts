/**
 * Query results read column by column as typed arrays over DuckDB's own chunk memory. The node API's
 * `getItem` tests each value's validity bit with BigInt arithmetic (~70 ns a value); a year of hourly
 * buckets for a few series is tens of thousands of values, so the answers read the bits as 32-bit words
 * instead. Every column of such a query is DOUBLE (the SQL casts to it), which the reader checks.
 */
import { type DuckDBDataChunk, DuckDBTypeId } from '@duckdb/node-api';
import bindings from '@duckdb/node-bindings';

/** One DOUBLE column of a result chunk: its values, and its validity bits (null when every row is valid). */
export interface DoubleColumn {
  readonly values: Float64Array;
  /** Bit `r & 31` of word `r >>> 5` is set when row `r` holds a value (DuckDB's 64-bit words, little-endian). */
  readonly valid: Uint32Array | null;
}

/** Row `r`'s value, or null. */
export function valueAt(c: DoubleColumn, r: number): number | null {
  return c.valid === null || ((c.valid[r >>> 5]! >>> (r & 31)) & 1) === 1 ? c.values[r]! : null;
}

/** The columns of one chunk, viewed in place: valid only until the result holding the chunk is dropped. */
export function doubleColumns(chunk: DuckDBDataChunk): DoubleColumn[] {
  const n = chunk.rowCount;
  const words = Math.ceil(n / 64);
  const cols: DoubleColumn[] = [];
  for (let j = 0; j < chunk.columnCount; j++) {
    const vec = bindings.data_chunk_get_vector(chunk.chunk, j);
    const data = bindings.vector_get_data(vec, n * 8);
    const bits = words > 0 ? bindings.vector_get_validity(vec, words * 8) : null;
    cols.push({
      values: new Float64Array(data.buffer, data.byteOffset, n),
      valid: bits ? new Uint32Array(bits.buffer, bits.byteOffset, words * 2) : null,
    });
  }
  return cols;
}

/** Refuses a result with a column that is not DOUBLE (a query that forgot its cast). */
export function assertDoubleColumns(typeIds: readonly DuckDBTypeId[], sql: string): void {
  const bad = typeIds.findIndex((t) => t !== DuckDBTypeId.DOUBLE);
  if (bad >= 0)
    throw new Error(
      `column ${bad} of a columnar answer is ${DuckDBTypeId[typeIds[bad]!]}, not DOUBLE: ${sql}`,
    );
}

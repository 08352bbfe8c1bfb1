/**
 * Text of an import, a line at a time: chunks of any size (a line may straddle them, a UTF-8 character
 * too) become whole lines numbered from 1, and CSV lines become records of cells (RFC 4180 quoting, a
 * quoted cell may hold line breaks). Only the unfinished line is held between chunks.
 */

export interface TextLine {
  text: string;
  /** 1-based number of the line. */
  line: number;
  /** False for a last line that ends without a line break. */
  terminated: boolean;
}

/** Longest line kept (characters): past it the rest of the line is dropped and reported. */
export const MAX_LINE_CHARS = 1 << 20;

export class LineReader {
  private buf = '';
  private lineNo = 0;
  private started = false;
  private overlong = false;
  private readonly decoder: { decode(input?: Uint8Array, options?: { stream?: boolean }): string };

  constructor(encoding = 'utf-8') {
    this.decoder = new TextDecoder(encoding);
  }

  /** Lines completed by this chunk; `tooLong` gets the numbers of lines cut at MAX_LINE_CHARS. */
  push(chunk: string | Uint8Array, tooLong: (line: number) => void): TextLine[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return this.split(text, tooLong);
  }

  /** The last line, when the text did not end with a line break. */
  end(tooLong: (line: number) => void): TextLine[] {
    const out = this.split(this.decoder.decode(), tooLong);
    if (this.buf.length > 0 || this.overlong) {
      const text = this.buf.endsWith('\r') ? this.buf.slice(0, -1) : this.buf;
      this.buf = '';
      if (!this.overlong) out.push({ text, line: ++this.lineNo, terminated: false });
      this.overlong = false;
    }
    return out;
  }

  get linesRead(): number {
    return this.lineNo;
  }

  private split(text: string, tooLong: (line: number) => void): TextLine[] {
    const out: TextLine[] = [];
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      const piece = text.slice(from, nl);
      from = nl + 1;
      const line = ++this.lineNo;
      if (this.overlong) {
        this.overlong = false;
        this.buf = '';
        continue;
      }
      let whole = this.buf + piece;
      this.buf = '';
      if (whole.endsWith('\r')) whole = whole.slice(0, -1);
      if (whole.length > MAX_LINE_CHARS) {
        tooLong(line);
        continue;
      }
      out.push({ text: whole, line, terminated: true });
    }
    if (from < text.length && !this.overlong) {
      this.buf += text.slice(from);
      if (this.buf.length > MAX_LINE_CHARS) {
        this.overlong = true;
        this.buf = '';
        tooLong(this.lineNo + 1);
      }
    }
    return out;
  }
}

export interface CsvRecord {
  cells: string[];
  /** Line the record starts on. */
  line: number;
  terminated: boolean;
}

/** Splits one record's text; `null` when a quoted cell is still open at its end. */
export function splitCsv(text: string, separator: string): string[] | null {
  const cells: string[] = [];
  let i = 0;
  const n = text.length;
  for (;;) {
    let cell = '';
    if (text[i] === '"') {
      i++;
      let closed = false;
      while (i < n) {
        const c = text[i]!;
        if (c === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        cell += c;
        i++;
      }
      if (!closed) return null;
      // Anything between the closing quote and the separator is kept, as spreadsheets do.
      while (i < n && text[i] !== separator) cell += text[i++];
    } else {
      const sep = text.indexOf(separator, i);
      const stop = sep < 0 ? n : sep;
      cell = text.slice(i, stop);
      i = stop;
    }
    cells.push(cell);
    if (i >= n) return cells;
    i++; // the separator
    if (i === n) {
      cells.push('');
      return cells;
    }
  }
}

/** Joins lines into CSV records while a quoted cell runs across line breaks. */
export class CsvRecordReader {
  private open: { text: string; line: number } | null = null;

  constructor(private readonly separator: string) {}

  /** The record this line completes, `'open'` while a quoted cell continues, or an error reason. */
  take(l: TextLine): CsvRecord | 'open' | { line: number; reason: string } {
    const start = this.open?.line ?? l.line;
    const text = this.open ? `${this.open.text}\n${l.text}` : l.text;
    const cells = splitCsv(text, this.separator);
    if (cells) {
      this.open = null;
      return { cells, line: start, terminated: l.terminated };
    }
    if (!l.terminated) {
      this.open = null;
      return {
        line: start,
        reason: 'a quoted cell is not closed before the end of the file (is it truncated?)',
      };
    }
    if (text.length > MAX_LINE_CHARS) {
      this.open = null;
      return { line: start, reason: 'a quoted cell is not closed: the record runs past 1 MiB' };
    }
    this.open = { text, line: start };
    return 'open';
  }

  /** At the end of the text: a record still open is an error. */
  end(): { line: number; reason: string } | null {
    if (!this.open) return null;
    const line = this.open.line;
    this.open = null;
    return { line, reason: 'a quoted cell is not closed before the end of the file (is it truncated?)' };
  }
}

/**
 * The dead-letter store: every rejected message with its reason, in a bounded in-memory ring and, when
 * a directory is configured, appended to `dead-letters-YYYY-MM-DD.jsonl` there.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface DeadLetter {
  at: number;
  topic: string;
  reason: string;
  detail?: string;
  payload: string;
}

/** Payloads are kept up to this many characters (an oversized one would otherwise fill the ring). */
const MAX_KEPT_PAYLOAD = 4096;

export class DeadLetterStore {
  private readonly ring: DeadLetter[] = [];
  private next = 0;
  private writing: Promise<void> = Promise.resolve();
  private dirReady: Promise<unknown> | null = null;

  constructor(
    private readonly capacity = 1000,
    private readonly dir?: string,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  add(topic: string, reason: string, detail: string, payload: Uint8Array | string): void {
    const text = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
    const entry: DeadLetter = {
      at: Date.now(),
      topic: topic.slice(0, 512),
      reason,
      detail,
      payload:
        text.length > MAX_KEPT_PAYLOAD ? `${text.slice(0, MAX_KEPT_PAYLOAD)}…(${text.length} chars)` : text,
    };
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    if (this.dir) this.persist(entry);
  }

  /** Newest first. */
  list(limit = 100): DeadLetter[] {
    const n = this.ring.length;
    const out: DeadLetter[] = [];
    for (let i = 1; i <= Math.min(limit, n); i++) out.push(this.ring[(this.next - i + n) % n] as DeadLetter);
    return out;
  }

  /** Resolves once every entry so far is on disk. */
  flush(): Promise<void> {
    return this.writing;
  }

  private persist(entry: DeadLetter): void {
    const dir = this.dir as string;
    this.dirReady ??= mkdir(dir, { recursive: true });
    const file = join(dir, `dead-letters-${new Date(entry.at).toISOString().slice(0, 10)}.jsonl`);
    const line = `${JSON.stringify(entry)}\n`;
    this.writing = this.writing
      .then(() => this.dirReady)
      .then(() => appendFile(file, line))
      .catch(this.onError);
  }
}

/** The ingest bench's progress log. */
export const log = (msg: string) => process.stderr.write(`[ingest bench] ${msg}\n`);

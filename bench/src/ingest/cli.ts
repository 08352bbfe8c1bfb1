/** The ingest bench's progress log and the options every mode reads. */
import { arg } from '../_args.ts';

export const log = (msg: string) => process.stderr.write(`[ingest bench] ${msg}\n`);

/** How long, how many meters, how fast, over how many connections, with how many readings in flight. */
export function loadOptions(args: string[]) {
  return {
    seconds: arg(args, 'seconds', 40),
    devices: arg(args, 'devices', 50),
    rate: arg(args, 'rate', 5000),
    publishers: arg(args, 'publishers', arg(args, 'devices', 50)),
    backlog: arg(args, 'backlog', 4000),
  };
}

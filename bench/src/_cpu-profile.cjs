/**
 * Preloaded into the server by `pnpm bench abuse --profile <dir>` (NODE_OPTIONS `--require`, where
 * `--cpu-prof` is not allowed): profiles the main thread from start to exit and writes a `.cpuprofile`
 * (open it in Chrome's DevTools or speedscope) into KW_BENCH_CPU_PROFILE_DIR.
 */
const inspector = require('node:inspector');
const fs = require('node:fs');
const path = require('node:path');
const dir = process.env.KW_BENCH_CPU_PROFILE_DIR;
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable', () => session.post('Profiler.start'));
let written = false;
function write() {
  if (written) return;
  written = true;
  session.post('Profiler.stop', (err, res) => {
    if (!err)
      fs.writeFileSync(path.join(dir, `server-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    process.exit(0);
  });
}
process.once('SIGTERM', write);
process.once('SIGINT', write);

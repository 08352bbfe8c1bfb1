/**
 * What answers on the server's port while the server starts. Opening the metadata database, building
 * the API's routes and starting ingest take seconds on a small machine (tens of seconds on a busy one);
 * meanwhile a browser gets a page that says Kilowatch is starting and reloads itself each second, and an
 * API client gets 503 "Kilowatch is starting. Try again shortly." with `Retry-After: 1`, instead of a
 * refused connection. `/api/health/live` answers 200: the process is up. The API takes the port over when
 * it is ready (`close()`, then it listens).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export const STARTING_MESSAGE = 'Kilowatch is starting. Try again shortly.';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="1">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Kilowatch is starting</title></head>
<body style="font-family: system-ui, sans-serif; margin: 3rem auto; max-width: 30rem; text-align: center">
<h1>Kilowatch is starting…</h1><p>This page opens by itself in a moment.</p></body></html>
`;

function answer(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/api/health/live') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ status: 'ok', starting: true }));
    return;
  }
  const api = path === '/api' || path.startsWith('/api/') || path === '/metrics';
  const wantsPage = !api && (req.method === 'GET' || req.method === 'HEAD');
  res.writeHead(503, {
    'retry-after': '1',
    'cache-control': 'no-store',
    'content-type': wantsPage ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
  });
  res.end(
    req.method === 'HEAD'
      ? undefined
      : wantsPage
        ? PAGE
        : JSON.stringify(
            path.startsWith('/api/health')
              ? { status: 'starting', message: STARTING_MESSAGE }
              : { message: STARTING_MESSAGE },
          ),
  );
}

export interface StartingListener {
  /** Frees the port for the API; connections still open are closed. */
  close(): void;
}

/** Listens on `port`/`host` at once with the answers above. Rejects as `listen` does (EADDRINUSE…). */
export function answerWhileStarting(port: number, host: string): Promise<StartingListener> {
  const server = createServer(answer);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => {
      server.off('error', reject);
      resolve({
        close() {
          server.close();
          server.closeAllConnections();
        },
      });
    });
  });
}

/**
 * The listener the compiled entry (entry.ts) started, for the server to take over. Kept on `globalThis`:
 * the entry and the server are separate bundles, each with its own copy of this module.
 */
const HANDED = Symbol.for('kilowatch.startingListener');
type WithListener = { [HANDED]?: StartingListener };

export function keepForHandOver(listener: StartingListener): void {
  (globalThis as WithListener)[HANDED] = listener;
}

/** The listener the entry started, once (undefined when the server was started some other way). */
export function takeHandedOver(): StartingListener | undefined {
  const g = globalThis as WithListener;
  const listener = g[HANDED];
  delete g[HANDED];
  return listener;
}

import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, parseCsv } from './index.ts';

describe('parseCsv', () => {
  it('reads quoted cells, doubled quotes and CRLF or LF records', () => {
    expect(parseCsv('a,"b,""c"""\r\n"x\r\ny",2\n3,\r\nlast,row')).toEqual([
      ['a', 'b,"c"'],
      ['x\r\ny', '2'],
      ['3', ''],
      ['last', 'row'],
    ]);
  });
});

describe('freePort', () => {
  it('answers a loopback port a server can listen on', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const srv = createServer();
    await new Promise<void>((ok, fail) => {
      srv.once('error', fail);
      srv.listen(port, '127.0.0.1', ok);
    });
    await new Promise<void>((ok) => srv.close(() => ok()));
  });
});

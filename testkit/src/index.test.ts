import { createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findServerBinary, freePort, parseCsv, serverMissing } from './index.ts';

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

describe('a server the machine lacks', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('skips its tests locally (null) and fails them under CI=true', () => {
    vi.stubEnv('CI', '');
    expect(serverMissing('kw-no-such-server', 'apt-get install kw')).toBeNull();
    expect(findServerBinary('kw-no-such-server')).toBeNull();
    vi.stubEnv('CI', 'true');
    expect(() => serverMissing('kw-no-such-server', 'apt-get install kw')).toThrow(
      'kw-no-such-server is not installed (apt-get install kw); CI requires it',
    );
    expect(() => findServerBinary('kw-no-such-server')).toThrow(/CI requires it/);
  });

  it('finds an installed binary under CI=true too', () => {
    vi.stubEnv('CI', 'true');
    expect(findServerBinary('sh')).toMatch(/\/sh$/);
  });
});

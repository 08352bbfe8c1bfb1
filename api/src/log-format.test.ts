/** The server log's two forms (log-format.ts): which one a start uses, and the line of text of an entry. */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, errorInOneLine, formatLogLine, prettyDestination } from './log-format.ts';

/** 12:00:05 local time on a fixed day: the line shows local time, whatever the zone. */
const AT = new Date(2026, 11, 2, 12, 0, 5, 250).getTime();

describe('the log format a start uses', () => {
  it.each([
    [undefined, true, 'pretty'],
    [undefined, false, 'json'],
    [undefined, undefined, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
    ['pretty', true, 'pretty'],
    ['json', false, 'json'],
  ] as const)('KW_LOG_FORMAT=%s, stdout a terminal: %s → %s', (asked, isTTY, expected) => {
    expect(chooseLogFormat(asked, isTTY)).toBe(expected);
  });
});

describe('an entry as a line of text', () => {
  const line = (entry: Record<string, unknown>) =>
    formatLogLine(JSON.stringify({ pid: 4242, hostname: 'box', time: AT, ...entry }));

  it('shows time, level and message, without pid and hostname', () => {
    expect(line({ level: 30, msg: 'Server listening at http://127.0.0.1:8080' })).toBe(
      '12:00:05 INFO  Server listening at http://127.0.0.1:8080',
    );
  });

  it("shows a request's method and path, its status and response time, and the other fields", () => {
    expect(
      line({
        level: 30,
        reqId: 'req-1',
        req: { method: 'GET', url: '/api/health', ip: '127.0.0.1' },
        msg: 'incoming request',
      }),
    ).toBe('12:00:05 INFO  incoming request GET /api/health reqId=req-1');
    expect(
      line({
        level: 30,
        reqId: 'req-1',
        res: { statusCode: 200 },
        responseTime: 2.0833,
        msg: 'request completed',
      }),
    ).toBe('12:00:05 INFO  request completed 200 2.1 ms reqId=req-1');
    expect(line({ level: 20, msg: 'rollups', devices: 6, range: 'last hour' })).toBe(
      '12:00:05 DEBUG rollups devices=6 range="last hour"',
    );
  });

  it("shows a warning's error as its type and first line, not DuckDB's paragraphs of advice", () => {
    const message =
      'Out of Memory Error: failed to allocate data of size 16.0 MiB (1.9 GiB/1.9 GiB used)\n\n' +
      'Possible solutions:\n* Reducing the number of threads (SET threads=X)\n* Disabling insertion-order preservation';
    const text = line({
      level: 40,
      msg: 'demo history: writing failed; trying once more',
      err: { type: 'Error', message, stack: `Error: ${message}\n    at backfill (backfill.ts:10:5)` },
    });
    expect(text).toBe(
      '12:00:05 WARN  demo history: writing failed; trying once more ' +
        '(Error: Out of Memory Error: failed to allocate data of size 16.0 MiB (1.9 GiB/1.9 GiB used))',
    );
  });

  it("puts the demo history's out-of-memory retry in one line", () => {
    const oom = new Error(
      'Out of Memory Error: failed to allocate data of size 16.0 MiB (1.9 GiB/1.9 GiB used)\n\n' +
        'Possible solutions:\n* Reducing the number of threads (SET threads=X)',
    );
    expect(`demo history: writing failed (${errorInOneLine(oom)}); trying once more`).toBe(
      'demo history: writing failed (Out of Memory Error: failed to allocate data of size 16.0 MiB ' +
        '(1.9 GiB/1.9 GiB used)); trying once more',
    );
    expect(errorInOneLine('store closed')).toBe('store closed');
  });

  it("keeps an error entry's stack frames on the lines below, and the message once", () => {
    const text = line({
      level: 50,
      msg: 'boom',
      err: {
        type: 'TypeError',
        message: 'boom',
        stack: 'TypeError: boom\n    at main (main.ts:1:1)\n    at run (run.ts:2:2)',
      },
    });
    expect(text.split('\n')).toEqual([
      '12:00:05 ERROR boom',
      '    at main (main.ts:1:1)',
      '    at run (run.ts:2:2)',
    ]);
  });

  it('gives back a line that is not a JSON object as it is', () => {
    expect(formatLogLine('Kilowatch is ready at http://127.0.0.1:8080\n')).toBe(
      'Kilowatch is ready at http://127.0.0.1:8080',
    );
    expect(formatLogLine('42')).toBe('42');
  });

  it("turns the server logger's own output into one line per entry", async () => {
    const written: string[] = [];
    const app = Fastify({
      logger: {
        level: 'info',
        timestamp: () => `,"time":${AT}`,
        stream: prettyDestination({ write: (t) => written.push(t) }),
      },
    });
    app.log.info({ device: 'aa:bb' }, 'meter connected');
    app.log.warn('store slow');
    app.log.debug('not written at level info');
    await app.close();
    expect(written).toEqual(['12:00:05 INFO  meter connected device=aa:bb\n', '12:00:05 WARN  store slow\n']);
  });
});

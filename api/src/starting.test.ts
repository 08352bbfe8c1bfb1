import { createServer } from 'node:http';
import { freePort } from '@kilowatch/testkit';
import { describe, expect, it } from 'vitest';
import { answerWhileStarting, STARTING_MESSAGE } from './starting.ts';

describe('the port while the server starts', () => {
  it('answers at once: 503 "starting" with Retry-After to API calls, a reloading page to browsers, 200 to liveness', async () => {
    const port = await freePort();
    const starting = await answerWhileStarting(port, '127.0.0.1');
    const base = `http://127.0.0.1:${port}`;
    try {
      const health = await fetch(`${base}/api/health`);
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).toBe('1');
      expect(await health.json()).toEqual({ status: 'starting', message: STARTING_MESSAGE });

      const live = await fetch(`${base}/api/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toMatchObject({ status: 'ok' });

      const login = await fetch(`${base}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'a@example.com', password: 'x' }),
      });
      expect(login.status).toBe(503);
      expect(login.headers.get('retry-after')).toBe('1');
      expect(await login.json()).toEqual({ message: STARTING_MESSAGE });

      const page = await fetch(`${base}/dashboard`);
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toContain('text/html');
      const html = await page.text();
      expect(html).toContain('http-equiv="refresh"');
      expect(html).toContain('Kilowatch is starting');
    } finally {
      starting.close();
    }
  });

  it('hands the port over: another server listens on it right after close, and answers', async () => {
    const port = await freePort();
    const starting = await answerWhileStarting(port, '127.0.0.1');
    // A kept-alive connection to the starting listener must not hold the port.
    expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(503);
    starting.close();
    const app = createServer((_req, res) => res.end('ready'));
    await new Promise<void>((resolve, reject) => {
      app.once('error', reject);
      app.listen({ port, host: '127.0.0.1' }, resolve);
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('ready');
    } finally {
      app.closeAllConnections();
      await new Promise((r) => app.close(r));
    }
  });

  it('fails as listen does when the port is taken', async () => {
    const port = await freePort();
    const first = await answerWhileStarting(port, '127.0.0.1');
    try {
      await expect(answerWhileStarting(port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      first.close();
    }
  });
});

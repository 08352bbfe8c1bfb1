import { performance } from 'node:perf_hooks';
import { sleep } from '@kilowatch/testkit';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { type PressureOptions, registerPressure } from './pressure.ts';

async function appWith(opts: PressureOptions): Promise<FastifyInstance> {
  const app = Fastify();
  registerPressure(app, opts, (url) => {
    if (url === '/api/health') return;
    throw Object.assign(new Error('busy'), { statusCode: 503 });
  });
  app.get('/api/x', async () => 'ok');
  app.get('/api/health', async () => ({ load: app.memoryUsage() }));
  await app.ready();
  return app;
}

describe('registerPressure', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('sheds API requests while the event loop stays late, not after one long turn, and serves them again', async () => {
    app = await appWith({ maxEventLoopDelay: 100, sampleMs: 50 });
    expect((await app.inject('/api/x')).statusCode).toBe(200);
    const hold = async (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // busy
      }
      // The sample due meanwhile fires ~ms - 50 late, before this test's next timer.
      await sleep(1);
    };

    // One long turn: served.
    await hold(400);
    expect(app.memoryUsage().eventLoopDelay).toBeLessThanOrEqual(100);
    expect((await app.inject('/api/x')).statusCode).toBe(200);

    // Two right after each other (two samples late in a row): shed.
    await hold(400);
    await hold(400);
    expect(app.memoryUsage().eventLoopDelay).toBeGreaterThan(100);
    expect((await app.inject('/api/x')).statusCode).toBe(503);
    // Monitoring is still answered.
    const health = await app.inject('/api/health');
    expect(health.statusCode).toBe(200);
    expect(health.json().load.eventLoopDelay).toBeGreaterThan(100);

    // The next samples find the loop on time again.
    let status = 503;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await sleep(20);
      status = (await app.inject('/api/x')).statusCode;
    }
    expect(status).toBe(200);
    expect(app.memoryUsage().eventLoopDelay).toBeLessThanOrEqual(100);
  });

  it('sheds over a memory limit from the first request (sampled at start)', async () => {
    app = await appWith({ maxHeapUsedBytes: 1 });
    expect((await app.inject('/api/x')).statusCode).toBe(503);
    expect((await app.inject('/api/health')).statusCode).toBe(200);
  });

  it('without limits sheds nothing and still reports the load', async () => {
    app = await appWith({ sampleMs: 20 });
    await sleep(60);
    expect((await app.inject('/api/x')).statusCode).toBe(200);
    const load = app.memoryUsage();
    expect(load.rssBytes).toBeGreaterThan(1024 * 1024);
    expect(load.heapUsed).toBeGreaterThan(1024 * 1024);
    expect(load.eventLoopUtilized).toBeGreaterThanOrEqual(0);
    expect(load.eventLoopUtilized).toBeLessThanOrEqual(1);
    expect(load.eventLoopDelay).toBeGreaterThanOrEqual(0);
  });
});

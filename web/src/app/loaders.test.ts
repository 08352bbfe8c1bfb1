import { isCancelledError, QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { loadThroughCancels } from './loaders.ts';

/** A query that waits until released and honours its abort signal, as the API client's requests do. */
function gatedQuery() {
  let calls = 0;
  const releases: (() => void)[] = [];
  const options = {
    queryKey: ['gated'],
    queryFn: ({ signal }: { signal: AbortSignal }) => {
      calls++;
      return new Promise<string>((resolve, reject) => {
        releases.push(() => resolve(`answer ${calls}`));
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    },
  };
  return {
    options,
    releaseAll: () => {
      for (const r of releases.splice(0)) r();
    },
    calls: () => calls,
  };
}

describe('loadThroughCancels', () => {
  it('loads again when the query under the loader is cancelled, and resolves with the new answer', async () => {
    const qc = new QueryClient();
    const q = gatedQuery();
    const loaded = loadThroughCancels(() => qc.ensureQueryData(q.options));
    await expect.poll(q.calls).toBe(1);
    await qc.cancelQueries({ queryKey: ['gated'] });
    await expect.poll(q.calls).toBe(2);
    q.releaseAll();
    await expect(loaded).resolves.toBe('answer 2');
  });

  it('without it the same cancellation rejects the loader (what the router showed as an error page)', async () => {
    const qc = new QueryClient();
    const q = gatedQuery();
    const loaded = qc.ensureQueryData(q.options);
    await expect.poll(q.calls).toBe(1);
    await qc.cancelQueries({ queryKey: ['gated'] });
    await expect(loaded).rejects.toSatisfy(isCancelledError);
  });

  it('passes a real failure on at once', async () => {
    let calls = 0;
    const failing = loadThroughCancels(async () => {
      calls++;
      throw new Error('500 from the API');
    });
    await expect(failing).rejects.toThrow('500 from the API');
    expect(calls).toBe(1);
  });
});

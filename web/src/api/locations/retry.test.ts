import { describe, expect, it } from 'vitest';
import { ApiError } from '../client.ts';
import { retryShedSave } from './retry.ts';

describe('retryShedSave', () => {
  it.each([
    { err: new ApiError('busy', 503), count: 0, retry: true },
    { err: new ApiError('slow down', 429), count: 3, retry: true },
    { err: new ApiError('busy', 503), count: 4, retry: false },
    { err: new ApiError('Unable to save data. Check form.', 400), count: 0, retry: false },
    { err: new ApiError('Network connection problem', 0), count: 0, retry: false },
    { err: new Error('boom'), count: 0, retry: false },
  ])('$err.message ($err.status) after $count tries → $retry', ({ err, count, retry }) => {
    expect(retryShedSave.retry(count, err)).toBe(retry);
  });

  it('waits longer each time, at most 8 s', () => {
    expect([0, 1, 2, 3, 4].map(retryShedSave.retryDelay)).toEqual([1000, 2000, 4000, 8000, 8000]);
  });
});

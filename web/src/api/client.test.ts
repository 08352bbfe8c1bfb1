import { describe, expect, it } from 'vitest';
import { ApiError, retryRead, retryShed, worthRetrying } from './client.ts';

describe('retry policies', () => {
  it.each([
    { err: new ApiError('busy', 503), count: 0, shed: true, read: true },
    { err: new ApiError('slow down', 429), count: 3, shed: true, read: true },
    { err: new ApiError('busy', 503), count: 4, shed: false, read: false },
    { err: new ApiError('Unable to save data. Check form.', 400), count: 0, shed: false, read: false },
    { err: new ApiError('Seems there is nothing here', 404), count: 0, shed: false, read: false },
    { err: new ApiError('Network connection problem', 0), count: 0, shed: false, read: true },
    { err: new ApiError('Network connection problem', 0), count: 1, shed: false, read: true },
    { err: new ApiError('Network connection problem', 0), count: 2, shed: false, read: false },
    { err: new Error('boom'), count: 0, shed: false, read: false },
  ])(
    '$err.message ($err.status) after $count tries → save $shed, read $read',
    ({ err, count, shed, read }) => {
      expect(retryShed.retry(count, err)).toBe(shed);
      expect(retryRead.retry(count, err)).toBe(read);
    },
  );

  it('waits longer each time, at most 8 s', () => {
    expect([0, 1, 2, 3, 4].map(retryShed.retryDelay)).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(retryRead.retryDelay).toBe(retryShed.retryDelay);
  });
});

describe('worthRetrying', () => {
  it('offers a retry after lost connections, timeouts, rate limits and server errors', () => {
    for (const status of [0, 408, 429, 500, 502, 503])
      expect(worthRetrying(new ApiError('x', status))).toBe(true);
    expect(worthRetrying(new TypeError('Failed to fetch'))).toBe(true);
  });

  it('offers none when the server refused the request itself', () => {
    for (const status of [400, 401, 403, 404, 409, 422])
      expect(worthRetrying(new ApiError('x', status))).toBe(false);
  });
});

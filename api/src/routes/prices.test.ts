/** A location's price series through `inject`, on PGlite and PostgreSQL. */
import { MAX_LOCATION_PRICES, MAX_PRICE_ROWS, MESSAGES } from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

const Q = 15 * 60_000;
const T0 = Date.parse('2026-06-10T00:00:00Z');
const iso = (t: number) => new Date(t).toISOString();

describe.each(engines())('price series on %s', (engine) => {
  let t: TestApp;
  let owner: Account;
  let location: number;

  beforeAll(async () => {
    t = await buildTestApp(engine, { now: () => Date.parse('2026-11-26T09:00:00Z') });
    owner = await signUp(t.app);
    location = (
      await as(t.app, owner, {
        method: 'POST',
        url: '/api/locations',
        payload: { name: 'Home', timezone: 'Europe/Warsaw' },
      })
    ).json().id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const put = (payload: unknown, csv = false, who = owner, id = location) =>
    as(t.app, who, {
      method: 'PUT',
      url: `/api/locations/${id}/prices`,
      payload: payload as string,
      headers: csv ? { 'content-type': 'text/csv' } : {},
    });
  const get = (from: number, to: number) =>
    as(t.app, owner, {
      method: 'GET',
      url: `/api/locations/${location}/prices?from=${iso(from)}&to=${iso(to)}`,
    });

  it('stores JSON and CSV prices, replaces a start sent again, and answers a range by start', async () => {
    const json = await put({
      prices: [
        { start: iso(T0), price: 0.4 },
        { start: iso(T0 + Q), price: -0.05 },
      ],
    });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual({ stored: 2, held: 2 });
    const csv = await put(`start,price\n${iso(T0 + Q)},0.45\n${iso(T0 + 2 * Q)};0,5\n`, true);
    expect(csv.json()).toEqual({ stored: 2, held: 3 });
    const answer = await get(T0, T0 + 4 * Q);
    expect(answer.json()).toEqual({
      locationId: location,
      prices: [
        { start: iso(T0), price: 0.4 },
        { start: iso(T0 + Q), price: 0.45 },
        { start: iso(T0 + 2 * Q), price: 0.5 },
      ],
    });
    expect((await get(T0 + Q, T0 + 2 * Q)).json().prices).toEqual([{ start: iso(T0 + Q), price: 0.45 }]);
  });

  it('names every bad row, stores none of them, and refuses a start named twice', async () => {
    const bad = await put({
      prices: [
        { start: iso(T0 + 3 * Q), price: 1 },
        { start: '2026-06-10T00:05:00Z', price: 1 },
        { start: iso(T0 + 4 * Q), price: 'x' },
      ],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual({
      'prices.1.start': [MESSAGES.priceStart],
      'prices.2.price': [MESSAGES.validNumber],
    });
    const csv = await put(`${iso(T0 + 3 * Q)},1\nnot a row\n`, true);
    expect(csv.statusCode).toBe(400);
    expect(csv.json().errors).toEqual({ 'prices.1': [MESSAGES.priceRow] });
    const twice = await put({
      prices: [
        { start: iso(T0 + 3 * Q), price: 1 },
        { start: iso(T0 + 3 * Q), price: 2 },
      ],
    });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().errors).toEqual({ 'prices.1.start': [MESSAGES.priceDuplicate] });
    expect((await get(T0 + 3 * Q, T0 + 5 * Q)).json().prices).toEqual([]);
    expect((await put({ prices: [] })).json().errors).toEqual({ prices: [MESSAGES.pricesRequired] });
  });

  it('deletes a range, keeps another user out, and bounds uploads and what a location holds', async () => {
    const del = await as(t.app, owner, {
      method: 'DELETE',
      url: `/api/locations/${location}/prices?from=${iso(T0)}&to=${iso(T0 + Q)}`,
    });
    expect(del.statusCode).toBe(204);
    expect((await get(T0, T0 + 4 * Q)).json().prices.map((p: { start: string }) => p.start)).toEqual([
      iso(T0 + Q),
      iso(T0 + 2 * Q),
    ]);
    const stranger = await signUp(t.app);
    expect((await put({ prices: [{ start: iso(T0), price: 1 }] }, false, stranger)).statusCode).toBe(404);
    const foreignGet = await as(t.app, stranger, {
      method: 'GET',
      url: `/api/locations/${location}/prices?from=${iso(T0)}&to=${iso(T0 + Q)}`,
    });
    expect(foreignGet.statusCode).toBe(404);

    const rows = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => ({ start: iso(from + i * Q), price: 0.1 }));
    const tooMany = await put({ prices: rows(MAX_PRICE_ROWS + 1, T0) });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors).toEqual({ prices: [MESSAGES.tooManyPrices] });
    // A second location filled to its bound in full uploads, then one more new start is refused.
    const full = (
      await as(t.app, owner, {
        method: 'POST',
        url: '/api/locations',
        payload: { name: 'Full', timezone: 'UTC' },
      })
    ).json().id;
    const start = Date.parse('2020-01-01T00:00:00Z');
    for (let held = 0; held < MAX_LOCATION_PRICES; held += MAX_PRICE_ROWS) {
      const n = Math.min(MAX_PRICE_ROWS, MAX_LOCATION_PRICES - held);
      const res = await put({ prices: rows(n, start + held * Q) }, false, owner, full);
      expect(res.statusCode).toBe(200);
    }
    const over = await put({ prices: rows(1, start + MAX_LOCATION_PRICES * Q) }, false, owner, full);
    expect(over.statusCode).toBe(409);
    expect(over.json().message).toBe(MESSAGES.pricesFull);
    // Replacing a start it holds is still taken.
    expect((await put({ prices: rows(1, start) }, false, owner, full)).json()).toEqual({
      stored: 1,
      held: MAX_LOCATION_PRICES,
    });
  }, 180_000);
});

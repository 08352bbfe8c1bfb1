import { describe, expect, it } from 'vitest';
import { MESSAGES } from './messages.ts';
import { duplicatePriceStarts, parsePriceCsv } from './prices.ts';

describe('price series CSV', () => {
  it('reads start,price rows with or without a header, and ; with a decimal comma', () => {
    expect(
      parsePriceCsv('start,price\n2026-06-10T12:00:00Z,0.41\n2026-06-10T12:15:00+00:00,-0.02\n'),
    ).toEqual({
      rows: [
        { start: Date.parse('2026-06-10T12:00:00Z'), price: 0.41 },
        { start: Date.parse('2026-06-10T12:15:00Z'), price: -0.02 },
      ],
    });
    expect(parsePriceCsv('2026-06-10T14:00:00+02:00;0,385\r\n')).toEqual({
      rows: [{ start: Date.parse('2026-06-10T12:00:00Z'), price: 0.385 }],
    });
  });

  it('names every bad row and takes nothing', () => {
    const parsed = parsePriceCsv(
      [
        'start,price',
        '2026-06-10T12:00:00Z,0.4',
        '2026-06-10T12:07:00Z,0.4',
        'yesterday,abc',
        'one cell',
        '2026-06-10T13:00:00Z,500',
      ].join('\n'),
    );
    expect(parsed).toEqual({
      errors: {
        'prices.1.start': [MESSAGES.priceStart],
        'prices.2.start': [MESSAGES.invalidTimestamp],
        'prices.2.price': [MESSAGES.validNumber],
        'prices.3': [MESSAGES.priceRow],
        'prices.4.price': [MESSAGES.priceRange],
      },
    });
    expect(parsePriceCsv('start,price\n')).toEqual({ errors: { prices: [MESSAGES.pricesRequired] } });
  });

  it('names a start given twice', () => {
    const t = Date.parse('2026-06-10T12:00:00Z');
    expect(
      duplicatePriceStarts([
        { start: t, price: 1 },
        { start: t + 900_000, price: 1 },
        { start: t, price: 2 },
      ]),
    ).toEqual({
      'prices.2.start': [MESSAGES.priceDuplicate],
    });
  });
});

import { describe, expect, it } from 'vitest';
import type { MessageId } from '../../i18n/i18n.ts';
import { importMessage, percentRead } from './importMessages.ts';

const t = (id: MessageId, values?: Record<string, unknown>) => `${id}${values ? JSON.stringify(values) : ''}`;
const known = new Map([['This import has already been undone.', 'Ten import został już cofnięty.']]);
const translate = (m: string) => known.get(m) ?? m;

describe('importMessage', () => {
  it.each([
    ['This import has already been undone.', 'Ten import został już cofnięty.'],
    [
      "The import cannot start: unknown parameter 'nope'.",
      `imports.server.cannotStart{"detail":"unknown parameter 'nope'."}`,
    ],
    [
      'The file cannot be imported: line 1: no column Czas.',
      'imports.server.cannotImport{"detail":"line 1: no column Czas."}',
    ],
    [
      'The file is larger than the import limit of 256 MiB (KW_IMPORT_MAX_BYTES).',
      'imports.server.tooLarge{"limit":"256 MiB"}',
    ],
    ['Something else.', 'Something else.'],
  ])('%s', (message, shown) => {
    expect(importMessage(t, translate, message)).toBe(shown);
  });
});

describe('percentRead', () => {
  it.each([
    [0, 1000, 0],
    [500, 1000, 50],
    [1000, 1000, 100],
    [1200, 1000, 100],
    [10, 0, 0],
  ])('%i of %i bytes → %i %', (read, size, percent) => {
    expect(percentRead(read, size)).toBe(percent);
  });
});

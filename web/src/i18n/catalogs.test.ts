import { MESSAGES } from '@kilowatch/core';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { describe, expect, it } from 'vitest';
import { en } from './locales/en.ts';
import { pl } from './locales/pl.ts';
import { tr } from './locales/tr.ts';

const catalogs = { pl, tr } as Record<string, Record<string, string>>;
const ids = Object.keys(en);

/** ICU placeholders (`{name}`, `{count, plural, ...}`) a message uses. */
function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\w+)/g)].map((m) => m[1] as string))].sort();
}

// Short or technical strings that are the same in every language.
const SAME_EVERYWHERE = new Set([
  'app.name',
  'overview.mac',
  'details.phase',
  'details.min',
  'col.model',
  'status.online',
  'status.offline',
  'details.int.15m',
  'details.int.30m',
  'nav.profile',
]);

describe.each(Object.entries(catalogs))('%s catalogue', (lang, catalog) => {
  it('has every message of the English catalogue', () => {
    expect(ids.filter((id) => !(id in catalog))).toEqual([]);
  });

  it('has no message that English lacks', () => {
    expect(Object.keys(catalog).filter((id) => !(id in en))).toEqual([]);
  });

  it('translates rather than copies', () => {
    const copied = ids.filter((id) => !SAME_EVERYWHERE.has(id) && catalog[id] === en[id as keyof typeof en]);
    // Loanwords may match English (Model, Online, Tema); most messages must not.
    expect(copied.length, `${lang} copies: ${copied.join(', ')}`).toBeLessThan(ids.length * 0.05);
  });

  it.each(ids)('%s keeps the placeholders and compiles', (id) => {
    const message = catalog[id] ?? '';
    expect(message.trim()).not.toBe('');
    expect(placeholders(message)).toEqual(placeholders(en[id as keyof typeof en]));
    expect(() => compileMessage(message)).not.toThrow();
  });
});

describe('server messages', () => {
  // The client finds a server message's translation by its English text (translateServerMessage).
  it('are every one in the English catalogue, word for word', () => {
    const english = new Set<string>(Object.values(en));
    expect(Object.entries(MESSAGES).filter(([, text]) => !english.has(text))).toEqual([]);
  });
});

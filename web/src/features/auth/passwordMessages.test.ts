import { MESSAGES } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { activateLanguage, translateServerMessage } from '../../i18n/i18n.ts';
import { pl } from '../../i18n/locales/pl.ts';
import { tr } from '../../i18n/locales/tr.ts';

describe("the server's refusal of a common password", () => {
  afterAll(async () => {
    await activateLanguage('en');
  });

  it.each([
    ['en', MESSAGES.commonPassword],
    ['pl', pl['val.passwordCommon']],
    ['tr', tr['val.passwordCommon']],
  ] as const)('reads in %s', async (lang, text) => {
    await activateLanguage(lang);
    expect(translateServerMessage(MESSAGES.commonPassword)).toBe(text);
  });

  it('is translated, not passed through in English', () => {
    expect(pl['val.passwordCommon']).not.toBe(MESSAGES.commonPassword);
    expect(tr['val.passwordCommon']).not.toBe(MESSAGES.commonPassword);
  });
});

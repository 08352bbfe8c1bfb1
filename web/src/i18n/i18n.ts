/**
 * Lingui 5 set-up without build-time macros: catalogs are typed TS objects keyed by message id,
 * compiled once when a language is activated. The chosen language is stored locally (docs/spec.md §9).
 */
import { i18n, type MessageDescriptor } from '@lingui/core';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { useLingui } from '@lingui/react';
import { useCallback } from 'react';
import { readStored, STORAGE_KEYS, writeStored } from '../lib/storage.ts';
import { en, type MessageId } from './locales/en.ts';
import { localizeNumbers } from './numbers.ts';

export type { MessageId };
export const LANGUAGES = ['en', 'pl', 'tr'] as const;
export type Language = (typeof LANGUAGES)[number];
export const LANGUAGE_NAMES: Record<Language, string> = { en: 'English', pl: 'Polski', tr: 'Türkçe' };

const loaders: Record<Language, () => Promise<Record<MessageId, string>>> = {
  en: async () => en,
  pl: async () => (await import('./locales/pl.ts')).pl,
  tr: async () => (await import('./locales/tr.ts')).tr,
};

export function isLanguage(x: unknown): x is Language {
  return typeof x === 'string' && (LANGUAGES as readonly string[]).includes(x);
}

/** True when the user picked a language on this device before this start. */
export const hadStoredLanguage = isLanguage(readStored(STORAGE_KEYS.language));

export function storedLanguage(): Language {
  const s = readStored(STORAGE_KEYS.language);
  return isLanguage(s) ? s : 'en';
}

function compile(messages: Record<string, string>) {
  return Object.fromEntries(Object.entries(messages).map(([id, m]) => [id, compileMessage(m)]));
}

export async function activateLanguage(lang: Language): Promise<void> {
  const messages = await loaders[lang]();
  i18n.load(lang, compile(messages));
  i18n.activate(lang);
  writeStored(STORAGE_KEYS.language, lang);
  if (typeof document !== 'undefined') document.documentElement.lang = lang;
}

export { i18n };

/**
 * Translates a catalogue id, fractions in `values` written as the language writes them; re-renders the
 * caller when the language changes.
 */
export function useT() {
  const { i18n: active } = useLingui();
  const t = useCallback(
    (id: MessageId, values?: Record<string, unknown>) =>
      active._({ id, values: localizeNumbers(values, active.locale) } as MessageDescriptor),
    [active],
  );
  return { t, locale: active.locale as Language };
}

const byEnglish = new Map<string, MessageId>(Object.entries(en).map(([id, text]) => [text, id as MessageId]));

/** Server messages come from the catalogue in English (docs/api.md §Conventions); show them translated. */
export function translateServerMessage(message: string): string {
  const id = byEnglish.get(message);
  return id ? i18n._(id) : message;
}

/** The catalogue title of a notification kind (`voltage-drop`, `voltage-drop-recovery`, …), if known. */
export function kindTitleId(kind: string): MessageId | null {
  const id = `alerts.kind.${kind}`;
  return id in en ? (id as MessageId) : null;
}

/** A notification as the API and the hub give it: `value` and `threshold` arrive with newer ones. */
export interface AlertLike {
  kind: string;
  message: string;
  phase?: number | null | undefined;
  value?: number | null | undefined;
  threshold?: number | null | undefined;
}

/**
 * A notification's message in the active language, from what it measured; the server's English message
 * when it did not say (notifications stored before it did) or the kind is unknown.
 */
export function alertMessage(n: AlertLike): string {
  const id = `alerts.msg.${n.kind}`;
  if (!(id in en) || n.value === null || n.value === undefined) return n.message;
  const perPhase = n.kind.startsWith('voltage') || n.kind === 'phase-overload';
  if (perPhase && (n.phase === null || n.phase === undefined)) return n.message;
  const format = new Intl.NumberFormat(i18n.locale || 'en', { maximumFractionDigits: 1 });
  return i18n._({
    id,
    values: {
      phase: n.phase ?? '',
      value: format.format(n.value),
      threshold: n.threshold === null || n.threshold === undefined ? '' : format.format(n.threshold),
    },
  } as MessageDescriptor);
}

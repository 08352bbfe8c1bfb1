/**
 * What browser tests use to pick dates and to wait for the answer an action asks for, so that no test
 * leans on today's date: days are named relative to the clock the suite runs at (the same clock the API
 * process and Chromium see, real or faked by `.ci/faked-clock`), and a wait names the request it expects.
 */
import { addLocalDays, localDateString, startOfLocalDay } from '@kilowatch/core';
import type { Page, Response } from 'playwright-core';

/** The local day `daysAgo` days before today in `tz`, as `YYYY-MM-DD`. */
export function localDayBefore(daysAgo: number, tz: string, now = Date.now()): string {
  return localDateString(addLocalDays(startOfLocalDay(now, tz), -daysAgo, tz), tz);
}

/** The start of local day `day` (`YYYY-MM-DD`) in `tz`, as an instant. */
export function localDayStart(day: string, tz: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  // Noon UTC of that date lies inside the local day in every zone within ±12 h.
  return startOfLocalDay(Date.UTC(y, m - 1, d, 12), tz);
}

/** The label Mantine's calendar gives a day button in English ("25 November 2026"). */
function dayLabel(day: string): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const month = new Date(Date.UTC(y, m - 1, 15)).toLocaleString('en', { month: 'long', timeZone: 'UTC' });
  return `${d} ${month} ${y}`;
}

const monthIndex = (day: string) => {
  const [y, m] = day.split('-').map(Number) as [number, number];
  return y * 12 + m;
};

/**
 * Clicks the local days `days` (`YYYY-MM-DD`, in order) on the open calendar dialog, moving it a month back
 * or forth first where a day lies in another month than the one shown. `shown` is the day whose month the
 * calendar shows when it opens (today, for a range that ends today). English labels (`en` interface).
 */
export async function clickCalendarDays(page: Page, shown: string, days: readonly string[]): Promise<void> {
  const calendar = page.locator('[role=dialog]');
  let at = monthIndex(shown);
  for (const day of days) {
    const want = monthIndex(day);
    for (; at > want; at--) await calendar.locator('[data-direction=previous]').first().click();
    for (; at < want; at++) await calendar.locator('[data-direction=next]').first().click();
    await calendar.locator(`button[aria-label="${dayLabel(day)}"]:not([data-outside])`).click();
  }
}

/**
 * The answer to the request an action must cause: armed before the action, it resolves with the first
 * response whose URL satisfies `match`. Past `timeoutMs` it fails saying which request was expected and
 * which ones the page made meanwhile: an action answered from the client's cache, or a range other than the
 * one expected, reads as that rather than as a bare timeout.
 */
export function answerTo(
  page: Page,
  match: (url: URL) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<Response> {
  const seen: string[] = [];
  const onRequest = (r: { url: () => string }) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/api/')) seen.push(`${url.pathname}${url.search}`);
  };
  page.on('request', onRequest);
  return page
    .waitForResponse((r) => match(new URL(r.url())), { timeout: timeoutMs })
    .catch((e: Error) => {
      throw new Error(
        `no answer to ${what} within ${timeoutMs} ms (${e.message.split('\n')[0]}); the page asked the API for: ${
          seen.slice(-12).join(' | ') || 'nothing (answered from its cache?)'
        }`,
      );
    })
    .finally(() => page.off('request', onRequest));
}

/** Whether `url` asks for exactly the range [from, to) (ISO instants in `from`/`to`). */
export function asksRange(url: URL, from: number, to: number): boolean {
  return (
    Date.parse(url.searchParams.get('from') ?? '') === from &&
    Date.parse(url.searchParams.get('to') ?? '') === to
  );
}

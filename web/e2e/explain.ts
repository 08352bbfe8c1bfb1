/**
 * What a browser test saw when it failed, printed beside the failure: the page's address and visible text,
 * the answers the API refused, the API's last answers to /api/ requests, and its last output. A CI run keeps nothing else of a failed browser
 * test, so this is what tells a timing problem (a shed request, a slow reload) from a broken screen.
 */
import type { Page } from 'playwright-core';
import { beforeEach } from 'vitest';
import type { RunningApi } from '../src/testing.ts';

export interface FailureContext {
  page?: Page;
  api?: RunningApi;
  /** Lines the test collected itself (failed answers, console errors). */
  notes?: () => readonly string[];
}

export function explainFailures(context: () => FailureContext): void {
  beforeEach((test) => {
    test.onTestFailed(async () => {
      const { page, api, notes } = context();
      const lines: string[] = [];
      if (page && !page.isClosed()) {
        lines.push(`page: ${page.url()}`);
        // The rendered text (what was on screen), read at once: no waiting on a page that may be stuck.
        const text = await page
          .locator('body')
          .allInnerTexts()
          .then((texts) => texts.join(' '))
          .catch((err: Error) => `(its text could not be read: ${err.message})`);
        lines.push(`shows: ${text.replace(/\s+/g, ' ').trim().slice(0, 2000)}`);
      }
      const noted = notes?.() ?? [];
      if (noted.length > 0) lines.push(`noted: ${noted.slice(-20).join(' | ')}`);
      if (api) {
        lines.push(`API requests, last 40:\n${api.requests().slice(-40).join('\n')}`);
        lines.push(`API output, last lines:\n${api.output().slice(-4000)}`);
      }
      console.error(`[${test.task.name}] when it failed:\n${lines.join('\n')}`);
    });
  });
}

/**
 * A browser test's own call to the API it drives, as the signed-in page's user: the token the page keeps for
 * this tab (a session not remembered) or for the browser.
 */
import type { Page } from 'playwright-core';

export type ApiCall = <T>(
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: T }>;

/** `page` and `apiUrl` are read at each call: suites set them up in `beforeAll`. */
export function callAsPage(page: () => Page, apiUrl: () => string): ApiCall {
  return async <T>(method: string, path: string, body?: unknown) => {
    const token = await page().evaluate(
      () => sessionStorage.getItem('kw.token') ?? localStorage.getItem('kw.token'),
    );
    const res = await fetch(`${apiUrl()}/api${path}`, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

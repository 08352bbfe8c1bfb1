/** The meter conformance suite's second account, as both brokers' tests claim its devices through the API. */
import { expect } from 'vitest';
import { type Account, as, type TestApp } from './testing/helper.ts';

const macOf = (key: string) => key.match(/../g)!.join(':');

/**
 * Claims a device for `account` (a rotation when it already holds it): its credentials, or the 409's
 * message.
 */
export async function claimFor(
  t: TestApp,
  account: Account,
  ids: Map<string, number>,
  key: string,
  stockTopics: boolean,
): Promise<{ username: string; password: string } | { conflict: string }> {
  const held = ids.get(key);
  if (held !== undefined) {
    const rotated = await as(t.app, account, {
      method: 'POST',
      url: `/api/devices/${held}/mqtt-credentials`,
    });
    expect(rotated.statusCode).toBe(200);
    return rotated.json();
  }
  const res = await as(t.app, account, {
    method: 'POST',
    url: '/api/devices',
    payload: { mac: macOf(key), name: 'Twin', typeCode: 1, stockTopics },
  });
  if (res.statusCode === 409) return { conflict: res.json().message };
  expect(res.statusCode).toBe(201);
  ids.set(key, res.json().id);
  return { username: res.json().mqtt.username, password: res.json().mqtt.password };
}

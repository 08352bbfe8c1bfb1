import { describe, expect, it } from 'vitest';
import { kindTitleId } from '../../i18n/i18n.ts';
import { type NotificationsPage, unreadCount } from './notifications.ts';

const n = (id: number, read: boolean) => ({
  id,
  deviceId: 1,
  kind: 'voltage-drop',
  message: 'm',
  at: id,
  read,
});

describe('unreadCount', () => {
  it('counts the unread notifications loaded', () => {
    const pages: NotificationsPage[] = [{ items: [n(3, false), n(2, true), n(1, false)], nextCursor: null }];
    expect(unreadCount(pages)).toEqual({ count: 2, more: false });
  });

  it('says there may be more when every loaded one is unread and older ones are not loaded', () => {
    expect(unreadCount([{ items: [n(3, false), n(2, false)], nextCursor: '2' }])).toEqual({
      count: 2,
      more: true,
    });
    // A read one among them: the older ones were seen before it.
    expect(unreadCount([{ items: [n(3, false), n(2, true)], nextCursor: '2' }])).toEqual({
      count: 1,
      more: false,
    });
  });

  it('is zero before anything is loaded', () => {
    expect(unreadCount(undefined)).toEqual({ count: 0, more: false });
    expect(unreadCount([{ items: [], nextCursor: null }])).toEqual({ count: 0, more: false });
  });
});

describe('kindTitleId', () => {
  it('titles every kind the evaluator raises, and its recovery', () => {
    for (const kind of ['voltage-drop', 'voltage-rise', 'consumption', 'no-data']) {
      expect(kindTitleId(kind)).toBe(`alerts.kind.${kind}`);
      expect(kindTitleId(`${kind}-recovery`)).toBe(`alerts.kind.${kind}-recovery`);
    }
    expect(kindTitleId('something-new')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { activateLanguage, alertMessage, kindTitleId } from '../../i18n/i18n.ts';
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

describe('alertMessage', () => {
  const drop = {
    kind: 'voltage-drop',
    message: 'Voltage drop on phase 2: 190.5 V (below 207 V)',
    phase: 2,
    value: 190.54,
    threshold: 207,
  };

  it('says what was measured in the active language', async () => {
    await activateLanguage('pl');
    try {
      expect(alertMessage(drop)).toBe('Spadek napięcia na fazie 2: 190,5 V (poniżej 207 V)');
      expect(alertMessage({ kind: 'consumption', message: 'x', value: 12.25, threshold: 10 })).toBe(
        'Dzisiejsze zużycie 12,3 kWh przekracza 10 kWh',
      );
    } finally {
      await activateLanguage('en');
    }
    expect(alertMessage(drop)).toBe(drop.message);
  });

  it('phrases the detector alerts as the server does, and in Polish', async () => {
    const overload = {
      kind: 'phase-overload',
      message: 'Overload on phase 1: 24 A (above 22.5 A)',
      phase: 1,
      value: 24,
      threshold: 22.5,
    };
    const imbalance = {
      kind: 'phase-imbalance',
      message: 'Phase imbalance: 168 % (above 50 %)',
      value: 168,
      threshold: 50,
    };
    const offline = {
      kind: 'meter-offline',
      message: 'No reading for 10 min (offline after 5 min)',
      value: 10,
      threshold: 5,
    };
    for (const n of [overload, imbalance, offline]) {
      expect(alertMessage(n)).toBe(n.message);
      expect(kindTitleId(n.kind)).toBe(`alerts.kind.${n.kind}`);
    }
    await activateLanguage('pl');
    try {
      expect(alertMessage(overload)).toBe('Przeciążenie fazy 1: 24 A (powyżej 22,5 A)');
      expect(alertMessage(offline)).toBe('Brak odczytu od 10 min (offline po 5 min)');
    } finally {
      await activateLanguage('en');
    }
  });

  it("keeps the server's message when the notification does not say what it measured", async () => {
    await activateLanguage('pl');
    try {
      expect(
        alertMessage({ kind: 'voltage-drop', message: 'Voltage drop on phase 1: 190 V (below 207 V)' }),
      ).toBe('Voltage drop on phase 1: 190 V (below 207 V)');
      expect(alertMessage({ kind: 'new-kind', message: 'As sent', value: 1 })).toBe('As sent');
    } finally {
      await activateLanguage('en');
    }
  });
});

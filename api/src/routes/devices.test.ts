import { DEFAULT_DAILY_ALERT_SETTINGS, DEFAULT_DETECTOR_ALERT_SETTINGS, MESSAGES } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Account,
  as,
  buildTestApp,
  duckDbStore,
  engines,
  signUp,
  type TestApp,
} from '../testing/helper.ts';

const MINUTE = 60_000;
let macSeq = 0x100;
function nextMac(): string {
  macSeq++;
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');
  return `AA:BB:CC:00:${hex((macSeq >> 8) & 0xff)}:${hex(macSeq & 0xff)}`;
}
function keyOf(mac: string): string {
  return mac.replace(/:/g, '').toLowerCase();
}

/** The app's clock: device status and "last seen" are judged against it, not the machine's date. */
const NOW = Date.parse('2026-11-26T09:00:00Z');

describe.each(engines())('devices on %s with DuckDB telemetry', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let owner: Account;
  let stranger: Account;

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, { store, now: () => NOW });
    owner = await signUp(t.app);
    stranger = await signUp(t.app);
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  async function claim(account: Account, body: Record<string, unknown> = {}) {
    const mac = nextMac();
    const res = await as(t.app, account, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac, name: 'Main board', typeCode: 1, ...body },
    });
    return { mac, res };
  }

  it('claims a meter by MAC: 201 Device with its MQTT account, offline until it reports', async () => {
    const { mac, res } = await claim(owner, { model: 'KW-3P', friendlyName: 'Garage' });
    expect(res.statusCode).toBe(201);
    const key = keyOf(mac);
    expect(res.json().mqtt).toEqual({
      host: 'localhost',
      port: 1883,
      tls: false,
      username: key,
      password: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      topics: {
        native: `kilowatch/meters/${key}/readings`,
        tasmota: `tele/tasmota_${key.slice(6).toUpperCase()}/SENSOR`,
        shelly: `shellypro3em-${key}/events/rpc`,
      },
    });
    expect({ ...res.json(), mqtt: undefined }).toEqual({
      mqtt: undefined,
      id: expect.any(Number),
      name: 'Main board',
      friendlyName: 'Garage',
      model: 'KW-3P',
      modelName: 'KW-3P',
      typeCode: 1,
      typeName: 'Three-phase meter',
      mac,
      deviceKey: keyOf(mac),
      phases: 3,
      detailsPath: `/device-details/${res.json().id}`,
      status: 'offline',
      lastSeen: null,
      rssi: null,
      location: null,
      tariff: null,
      role: 'consumer',
    });
  });

  it('normalises the MAC notation and answers 409 when the meter is already claimed', async () => {
    const { mac } = await claim(owner);
    const dotted = keyOf(mac).replace(/(....)(....)(....)/, '$1.$2.$3');
    for (const account of [owner, stranger]) {
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac: dotted, name: 'Again', typeCode: 1 },
      });
      expect(res.statusCode).toBe(409);
      expect(res.json().message).toBe(MESSAGES.alreadyClaimed);
    }
  });

  it('gives a stock Tasmota suffix to one device: concurrent twin claims get one 201, the rest 409; a twin is claimed with its key as Topic', async () => {
    // A suffix no other case's MAC (AA:BB:CC:00:…) ends in.
    const suffix = `ee${(macSeq++ & 0xffff).toString(16).padStart(4, '0')}`;
    const macs = ['11:11:11', '22:22:22', '33:33:33'].map(
      (head) => `${head}:${suffix.match(/../g)!.join(':')}`,
    );
    const answers = await Promise.all(
      macs.map((mac, i) =>
        as(t.app, i % 2 ? stranger : owner, {
          method: 'POST',
          url: '/api/devices',
          payload: { mac, name: 'Twin', typeCode: 1 },
        }),
      ),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    for (const r of answers.filter((r) => r.statusCode === 409))
      expect(r.json()).toMatchObject({
        message: MESSAGES.stockTopicTaken,
        errors: { mac: [MESSAGES.stockTopicTaken] },
      });
    const winner = answers.find((r) => r.statusCode === 201)!.json();
    expect(winner.mqtt.topics.tasmota).toBe(`tele/tasmota_${suffix.toUpperCase()}/SENSOR`);
    const loser = macs[answers.findIndex((r) => r.statusCode === 409)]!;
    const twin = await as(t.app, stranger, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: loser, name: 'Twin', typeCode: 1, stockTopics: false },
    });
    expect(twin.statusCode).toBe(201);
    expect(twin.json().mqtt.topics.tasmota).toBe(`tele/${keyOf(loser)}/SENSOR`);
    // The meter itself claimed answers as before, whatever its suffix.
    const again = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: loser, name: 'Twin', typeCode: 1 },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(MESSAGES.alreadyClaimed);
    // Deleting the holder frees its suffix.
    const holder = answers.findIndex((r) => r.statusCode === 201);
    const removed = await as(t.app, holder % 2 ? stranger : owner, {
      method: 'DELETE',
      url: `/api/devices/${winner.id}`,
    });
    expect(removed.statusCode).toBe(204);
    const third = macs.find((m, i) => i !== holder && m !== loser)!;
    const freed = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: third, name: 'Twin', typeCode: 1 },
    });
    expect(freed.statusCode).toBe(201);
  });

  it.each([
    [{ mac: 'zz:bb', name: 'x', typeCode: 1 }, { mac: [MESSAGES.invalidMac] }],
    [{ mac: 'AA:BB:CC:DD:EE:01', name: '', typeCode: 1 }, { name: [MESSAGES.fieldEmpty] }],
    [{ mac: 'AA:BB:CC:DD:EE:02', name: 'x', typeCode: 'one' }, { typeCode: [MESSAGES.validNumber] }],
  ])('rejects the claim %j', async (payload, errors) => {
    const res = await as(t.app, owner, { method: 'POST', url: '/api/devices', payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual(errors);
  });

  it('lists devices with status and last seen from the store, type code picking the details page', async () => {
    const a = await signUp(t.app);
    const { mac } = await claim(a, { typeCode: 16, name: 'Energy' });
    await claim(a, { typeCode: 2, phases: 1, name: 'Flat' });
    const now = NOW;
    await store.write([{ deviceKey: keyOf(mac), ts: now - MINUTE, values: { vave1: 231 } }]);
    const res = await as(t.app, a, { method: 'GET', url: '/api/devices' });
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list.map((d: { name: string }) => d.name)).toEqual(['Energy', 'Flat']);
    expect(list[0]).toMatchObject({
      status: 'online',
      lastSeen: now - MINUTE,
      typeName: 'Bidirectional energy meter',
    });
    expect(list[0].detailsPath).toMatch(/^\/device-energy-details\//);
    expect(list[1]).toMatchObject({ status: 'offline', lastSeen: null, phases: 1 });
    expect(list[1].detailsPath).toMatch(/^\/single-phase-device-details\//);
  });

  it('overview and edit: location, tariff (own or the location default), billing period', async () => {
    const a = await signUp(t.app);
    const loc = (
      await as(t.app, a, {
        method: 'POST',
        url: '/api/locations',
        payload: { name: 'Home', timezone: 'Europe/London' },
      })
    ).json();
    const tariff = (
      await as(t.app, a, {
        method: 'POST',
        url: `/api/locations/${loc.id}/tariffs`,
        payload: {
          name: 'G12 2026',
          group: 'G12',
          zone1Price: 0.9,
          zone2Price: 0.5,
          validFrom: '2026-01-01',
        },
      })
    ).json();
    await as(t.app, a, {
      method: 'PUT',
      url: `/api/locations/${loc.id}`,
      payload: { name: 'Home', timezone: 'Europe/London', tariffId: tariff.id },
    });
    const { res } = await claim(a, { locationId: loc.id });
    const id = res.json().id;
    expect(res.json().location).toEqual({ id: loc.id, name: 'Home' });
    expect(res.json().tariff).toEqual({ id: tariff.id, name: 'G12 2026' });

    const overview = await as(t.app, a, { method: 'GET', url: `/api/devices/${id}` });
    expect(overview.statusCode).toBe(200);
    expect(overview.json()).toMatchObject({
      id,
      billingMonths: 1,
      defaultTariff: { id: tariff.id, name: 'G12 2026' },
      notifications: { enabled: false, voltageDrop: 207, voltageRise: 253, interval: 60 },
    });
    expect(overview.json().registeredAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const put = await as(t.app, a, {
      method: 'PUT',
      url: `/api/devices/${id}`,
      payload: {
        name: 'Renamed',
        friendlyName: 'Kitchen',
        locationId: null,
        tariffId: tariff.id,
        billingStart: '2026-02-01',
        billingMonths: 2,
      },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'Renamed',
      friendlyName: 'Kitchen',
      location: null,
      tariff: { id: tariff.id },
      defaultTariff: null,
      billingStart: '2026-02-01',
      billingMonths: 2,
    });

    const bad = await as(t.app, a, {
      method: 'PUT',
      url: `/api/devices/${id}`,
      payload: { name: '', billingStart: '2026-13-01', billingMonths: 0 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual({
      name: [MESSAGES.fieldEmpty],
      billingStart: [MESSAGES.invalidDate],
      billingMonths: ['Must be greater than or equal to 1, and less than or equal to 24.'],
    });
  });

  it('gives each device a role in its location: the type decides by default, one grid meter per location', async () => {
    const a = await signUp(t.app);
    const place = async (name: string) =>
      (
        await as(t.app, a, {
          method: 'POST',
          url: '/api/locations',
          payload: { name, timezone: 'Europe/Warsaw' },
        })
      ).json().id as number;
    const home = await place('Home');
    const cabin = await place('Cabin');
    const roleOf = async (id: number) =>
      (await as(t.app, a, { method: 'GET', url: `/api/devices/${id}` })).json().role as string;
    const claimed = async (body: Record<string, unknown>) => {
      const { res } = await claim(a, body);
      expect(res.statusCode).toBe(201);
      return res.json() as { id: number; role: string };
    };
    // The first energy meter of a location is its grid meter; the second a sub-meter; PV produces.
    const grid = await claimed({ typeCode: 16, locationId: home });
    const second = await claimed({ typeCode: 13, locationId: home });
    const pv = await claimed({ typeCode: 10, locationId: home });
    const board = await claimed({ typeCode: 1, locationId: home });
    expect([grid.role, second.role, pv.role, board.role]).toEqual([
      'grid',
      'consumer',
      'production',
      'consumer',
    ]);
    // Another location, and a device in none, have grid meters of their own.
    expect((await claimed({ typeCode: 13, locationId: cabin })).role).toBe('grid');
    expect((await claimed({ typeCode: 13 })).role).toBe('grid');
    expect(
      (await as(t.app, a, { method: 'GET', url: '/api/devices' }))
        .json()
        .map((d: { role: string }) => d.role),
    ).toEqual(['grid', 'consumer', 'production', 'consumer', 'grid', 'grid']);

    // A second grid meter asked for by name is refused, at a claim and at an edit, and nothing changes.
    const refused = await claim(a, { typeCode: 13, locationId: home, role: 'grid' });
    expect(refused.res.statusCode).toBe(409);
    expect(refused.res.json()).toMatchObject({
      message: MESSAGES.gridTaken,
      errors: { role: [MESSAGES.gridTaken] },
    });
    expect((await claim(a, { mac: refused.mac, typeCode: 13, locationId: home })).res.statusCode).toBe(201);
    const edit = (id: number, body: Record<string, unknown>) =>
      as(t.app, a, {
        method: 'PUT',
        url: `/api/devices/${id}`,
        payload: { name: 'Meter', billingStart: '2026-01-01', billingMonths: 1, locationId: home, ...body },
      });
    const taken = await edit(second.id, { role: 'grid' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().errors).toEqual({ role: [MESSAGES.gridTaken] });
    expect(await roleOf(second.id)).toBe('consumer');
    // The old grid meter given another role frees the place.
    expect((await edit(grid.id, { role: 'consumer' })).json().role).toBe('consumer');
    expect((await edit(second.id, { role: 'grid' })).json().role).toBe('grid');
    // A battery; an edit without a role keeps it.
    expect((await edit(board.id, { role: 'storage' })).json().role).toBe('storage');
    expect((await edit(board.id, { name: 'Battery' })).json()).toMatchObject({
      name: 'Battery',
      role: 'storage',
    });
    // A grid meter moved into a location that has one becomes a sub-meter there.
    const cabinGrid = (await as(t.app, a, { method: 'GET', url: '/api/devices' }))
      .json()
      .find(
        (d: { location: { id: number } | null; role: string }) =>
          d.location?.id === cabin && d.role === 'grid',
      );
    expect((await edit(cabinGrid.id, {})).json()).toMatchObject({ location: { id: home }, role: 'consumer' });
    // Only the four roles.
    const bad = await edit(pv.id, { role: 'battery' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.role).toEqual([MESSAGES.invalidRole]);
    expect(await roleOf(pv.id)).toBe('production');
  });

  it('notification settings round-trip and are validated', async () => {
    const { res } = await claim(owner);
    const id = res.json().id;
    const settings = {
      enabled: true,
      voltageDrop: 200,
      voltageRise: 250,
      totalConsumption: 30,
      disableAtNight: false,
      interval: 15,
      muteAll: false,
    };
    const put = await as(t.app, owner, {
      method: 'PUT',
      url: `/api/devices/${id}/notifications`,
      payload: settings,
    });
    expect(put.statusCode).toBe(200);
    expect(
      (await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/notifications` })).json(),
    ).toEqual({ ...settings, ...DEFAULT_DETECTOR_ALERT_SETTINGS, ...DEFAULT_DAILY_ALERT_SETTINGS });
    const bad = await as(t.app, owner, {
      method: 'PUT',
      url: `/api/devices/${id}/notifications`,
      payload: { ...settings, voltageDrop: 'low' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual({ voltageDrop: [MESSAGES.validNumber] });
  });

  describe('limit values (docs/spec.md §5)', () => {
    let id: number;
    beforeAll(async () => {
      id = (await claim(owner)).res.json().id;
    });

    it('default to 10 % / 15 % and store a valid pair', async () => {
      expect((await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/limits` })).json()).toEqual({
        warning: 10,
        critical: 15,
      });
      const put = await as(t.app, owner, {
        method: 'PUT',
        url: `/api/devices/${id}/limits`,
        payload: { warning: 5, critical: 100 },
      });
      expect(put.statusCode).toBe(200);
      expect((await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/limits` })).json()).toEqual({
        warning: 5,
        critical: 100,
      });
    });

    it.each([
      [
        { warning: 20, critical: 20 },
        { warning: [MESSAGES.warningBelowCritical], critical: [MESSAGES.criticalAboveWarning] },
      ],
      [
        { warning: 30, critical: 10 },
        { warning: [MESSAGES.warningBelowCritical], critical: [MESSAGES.criticalAboveWarning] },
      ],
      [{ warning: 51, critical: 60 }, { warning: [MESSAGES.warningRange] }],
      [{ warning: -1, critical: 60 }, { warning: [MESSAGES.warningRange] }],
      [{ warning: 10, critical: 101 }, { critical: [MESSAGES.criticalRange] }],
      [{ warning: 'ten', critical: 20 }, { warning: [MESSAGES.validNumber] }],
      [{ warning: 10 }, { critical: [MESSAGES.validNumber] }],
    ])('reject %j', async (payload, errors) => {
      const res = await as(t.app, owner, { method: 'PUT', url: `/api/devices/${id}/limits`, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ message: MESSAGES.limitsFailed, errors });
    });
  });

  it('provide-meter-value stores offset = given value − counter value at that time', async () => {
    const { mac, res } = await claim(owner);
    const id = res.json().id;
    const key = keyOf(mac);
    const t0 = Date.UTC(2026, 5, 1, 10, 0);
    await store.write([
      { deviceKey: key, ts: t0, values: { eai1: 100 } },
      { deviceKey: key, ts: t0 + 15 * MINUTE, values: { eai1: 101.5 } },
      { deviceKey: key, ts: t0 + 30 * MINUTE, values: { eai1: 103 } },
    ]);
    const ok = await as(t.app, owner, {
      method: 'POST',
      url: `/api/devices/${id}/meter-value`,
      payload: { param: 'eai1', value: 12_345.5, at: new Date(t0 + 20 * MINUTE).toISOString() },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({
      param: 'eai1',
      value: 12_345.5,
      at: new Date(t0 + 20 * MINUTE).toISOString(),
      offset: 12_345.5 - 101.5,
    });
    const offsets = await t.app.devices.meterOffsets(id);
    expect(offsets).toEqual([
      { param: 'eai1', at: t0 + 20 * MINUTE, value: 12_345.5, counterValue: 101.5, offset: 12_244 },
    ]);

    const noData = await as(t.app, owner, {
      method: 'POST',
      url: `/api/devices/${id}/meter-value`,
      payload: { param: 'eai1', value: 1, at: new Date(t0 - 60 * 86_400_000).toISOString() },
    });
    expect(noData.statusCode).toBe(400);
    expect(noData.json().message).toBe(MESSAGES.meterValueFailed);

    const bad = await as(t.app, owner, {
      method: 'POST',
      url: `/api/devices/${id}/meter-value`,
      payload: { param: 'vave1', value: 'x', at: 'yesterday' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      message: MESSAGES.meterValueFailed,
      errors: {
        param: [MESSAGES.selectParameter],
        value: [MESSAGES.validNumber],
        at: [MESSAGES.invalidTimestamp],
      },
    });
  });

  it('delete removes the device and its telemetry', async () => {
    const { mac, res } = await claim(owner);
    const id = res.json().id;
    const key = keyOf(mac);
    await store.write([{ deviceKey: key, ts: NOW - MINUTE, values: { vave1: 230 } }]);
    expect(await store.latest(key)).not.toBeNull();
    const del = await as(t.app, owner, { method: 'DELETE', url: `/api/devices/${id}` });
    expect(del.statusCode).toBe(204);
    expect(await store.latest(key)).toBeNull();
    expect((await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}` })).statusCode).toBe(404);
    // The meter can be claimed again.
    const again = await as(t.app, stranger, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac, name: 'Mine', typeCode: 1 },
    });
    expect(again.statusCode).toBe(201);
  });

  it("another user's device answers 404 on every route, and stays untouched", async () => {
    const { mac, res } = await claim(owner);
    const id = res.json().id;
    await store.write([{ deviceKey: keyOf(mac), ts: NOW - MINUTE, values: { vave1: 230, eai1: 5 } }]);
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/devices/${id}`],
      ['PUT', `/api/devices/${id}`, { name: 'x', billingStart: '2026-01-01', billingMonths: 1 }],
      ['DELETE', `/api/devices/${id}`],
      ['GET', `/api/devices/${id}/notifications`],
      [
        'PUT',
        `/api/devices/${id}/notifications`,
        {
          enabled: true,
          voltageDrop: 1,
          voltageRise: 2,
          totalConsumption: 3,
          disableAtNight: true,
          interval: 5,
          muteAll: true,
        },
      ],
      ['GET', `/api/devices/${id}/limits`],
      ['PUT', `/api/devices/${id}/limits`, { warning: 1, critical: 2 }],
      [
        'POST',
        `/api/devices/${id}/meter-value`,
        { param: 'eai1', value: 1, at: new Date(NOW).toISOString() },
      ],
    ];
    for (const [method, url, payload] of routes) {
      const r = await as(t.app, stranger, {
        method: method as 'GET',
        url,
        ...(payload ? { payload: payload as object } : {}),
      });
      expect([method, url, r.statusCode]).toEqual([method, url, 404]);
      expect(r.json()).toEqual({ message: MESSAGES.notFound });
    }
    const list = (await as(t.app, stranger, { method: 'GET', url: '/api/devices' })).json();
    expect(list.find((d: { id: number }) => d.id === id)).toBeUndefined();
    expect((await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/limits` })).json()).toEqual({
      warning: 10,
      critical: 15,
    });
    expect(await store.latest(keyOf(mac))).not.toBeNull();
  });

  it('answers 404 for ids that are not ids, and 401 without a token', async () => {
    expect((await as(t.app, owner, { method: 'GET', url: '/api/devices/abc' })).statusCode).toBe(404);
    expect((await as(t.app, owner, { method: 'GET', url: '/api/devices/0' })).statusCode).toBe(404);
    expect((await as(t.app, owner, { method: 'GET', url: '/api/devices/999999' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/devices' })).statusCode).toBe(401);
  });
});

describe('device status from an ingest runtime in the same process', () => {
  it("reports the runtime's live state (weak signal, RSSI, last seen) over the stored readings", async () => {
    const store = await duckDbStore();
    const states = new Map<
      string,
      { deviceKey: string; status: 'weak-signal'; lastSeen: number; rssi: number }
    >();
    const t = await buildTestApp(engines()[engines().length - 1]!, {
      store,
      deviceStates: { deviceState: (key) => states.get(key) },
    });
    try {
      const a = await signUp(t.app);
      const mac = nextMac();
      const claimed = await as(t.app, a, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac, name: 'Shed', typeCode: 2, phases: 1 },
      });
      expect(claimed.json().status).toBe('offline');
      states.set(keyOf(mac), {
        deviceKey: keyOf(mac),
        status: 'weak-signal',
        lastSeen: 1_790_000_000_000,
        rssi: -86,
      });
      const list = (await as(t.app, a, { method: 'GET', url: '/api/devices' })).json();
      expect(list[0]).toMatchObject({ status: 'weak-signal', lastSeen: 1_790_000_000_000, rssi: -86 });
    } finally {
      await t.close();
      await store.close();
    }
  });
});

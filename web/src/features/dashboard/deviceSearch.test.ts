import type { Device } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { effectiveQuery, searchDevices } from './deviceSearch.ts';

const dev = (id: number, name: string, extra: Partial<Device> = {}): Device => ({
  id,
  name,
  friendlyName: '',
  model: '',
  modelName: '',
  typeCode: 1,
  typeName: '',
  mac: '',
  deviceKey: '',
  phases: 3,
  detailsPath: '',
  status: 'online',
  lastSeen: null,
  rssi: null,
  location: null,
  tariff: null,
  role: 'consumer',
  ...extra,
});

const devices = [
  dev(1, 'House main', { location: { id: 1, name: 'Kraków' }, model: 'KW-3P' }),
  dev(2, 'Garage', { tariff: { id: 1, name: 'G12w' } }),
  dev(3, 'Roof PV', { typeName: 'Solar installation', mac: 'a1b2c3d4e5f6' }),
];

describe('effectiveQuery', () => {
  it.each([
    ['', ''],
    ['g', ''],
    [' g ', ''],
    ['ga', 'ga'],
    ['  garage ', 'garage'],
  ])('%j → %j', (input, out) => {
    expect(effectiveQuery(input)).toBe(out);
  });
});

describe('searchDevices', () => {
  it.each([
    ['', [1, 2, 3]],
    ['h', [1, 2, 3]],
    ['ho', [1]],
    ['krakow', [1]],
    ['g12', [2]],
    ['solar', [3]],
    ['a1b2', [3]],
    ['kw-3p house', [1]],
    ['nothing', []],
  ])('%j → %j', (q, ids) => {
    expect(searchDevices(devices, q).map((d) => d.id)).toEqual(ids);
  });
});

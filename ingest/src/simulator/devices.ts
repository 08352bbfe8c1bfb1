import type { DeviceRole } from '@kilowatch/core';

export type SimulatedKind = 'three-phase' | 'single-phase' | 'solar' | 'thermostat' | 'energy';

export interface SimulatedDevice {
  deviceKey: string;
  name: string;
  typeCode: number;
  model: string;
  phases: 1 | 3;
  kind: SimulatedKind;
  /** Its part in the demo home's energy flows (docs/domain.md §Energy flows); its type's when absent. */
  role?: DeviceRole;
}

/** The demo account's meters: one of each kind (type codes as in core's DEVICE_TYPES). */
export const DEMO_DEVICES: readonly SimulatedDevice[] = [
  {
    deviceKey: 'b8d61a5c0001',
    name: 'House main meter',
    typeCode: 1,
    model: 'KW-3P-80',
    phases: 3,
    kind: 'three-phase',
  },
  {
    deviceKey: 'b8d61a5c0002',
    name: 'Garage',
    typeCode: 2,
    model: 'KW-1P-40',
    phases: 1,
    kind: 'single-phase',
  },
  {
    deviceKey: 'b8d61a5c0003',
    name: 'Roof PV 8 kWp',
    typeCode: 10,
    model: 'KW-PV-8K',
    phases: 3,
    kind: 'solar',
  },
  {
    deviceKey: 'b8d61a5c0004',
    name: 'Heat pump meter',
    typeCode: 13,
    model: 'KW-EM-3P',
    phases: 3,
    kind: 'energy',
    role: 'consumer',
  },
  {
    deviceKey: 'b8d61a5c0005',
    name: 'Grid connection',
    typeCode: 16,
    model: 'KW-EM-3P-BI',
    phases: 3,
    kind: 'energy',
    role: 'grid',
  },
  {
    deviceKey: 'b8d61a5c0006',
    name: 'Living room thermostat',
    typeCode: 17,
    model: 'KW-TH-1',
    phases: 1,
    kind: 'thermostat',
  },
];

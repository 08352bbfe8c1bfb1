/**
 * One reading of a simulated meter at an instant: expected power curves (curves.ts) plus deterministic
 * noise, and energy registers integrated from the same curves so counters agree with powers.
 */
import { DAY_MS, type Reading } from '@kilowatch/core';
import { EnergyRegister } from './counters.ts';
import { heatPumpPowerW, householdPowerW, localClock, outdoorTempC, solarPowerW } from './curves.ts';
import { DEMO_DEVICES, type SimulatedDevice } from './devices.ts';
import { gauss, hashString, uniform } from './noise.ts';

export interface SimulationOptions {
  /** Same seed, same readings (default 1). */
  seed?: number;
  /** Counter registers restart from 0 every this many days (a replaced meter); 0 or unset = never. */
  counterResetEveryDays?: number;
}

/** Registers per device key, curve and variant (scale or seed); looked up without building strings. */
const registers = new Map<string, Map<string, Map<number, EnergyRegister>>>();

function register(
  deviceKey: string,
  curve: string,
  variant: number,
  powerW: (ts: number) => number,
): EnergyRegister {
  let byCurve = registers.get(deviceKey);
  if (!byCurve) {
    byCurve = new Map();
    registers.set(deviceKey, byCurve);
  }
  let byVariant = byCurve.get(curve);
  if (!byVariant) {
    byVariant = new Map();
    byCurve.set(curve, byVariant);
  }
  let r = byVariant.get(variant);
  if (!r) {
    r = new EnergyRegister(powerW);
    byVariant.set(variant, r);
  }
  return r;
}

const POW10 = [1, 10, 100, 1000];
const round = (x: number, digits: number) => {
  const f = POW10[digits] ?? 10 ** digits;
  return Math.round(x * f) / f;
};

/** Per-phase parameter names, index 1..3 (no string building per reading). */
const phaseNames = (base: string) => ['', `${base}1`, `${base}2`, `${base}3`] as const;
const N = {
  pave: phaseNames('pave'),
  pmax: phaseNames('pmax'),
  pmin: phaseNames('pmin'),
  vave: phaseNames('vave'),
  vmax: phaseNames('vmax'),
  vmin: phaseNames('vmin'),
  iave: phaseNames('iave'),
  imax: phaseNames('imax'),
  imin: phaseNames('imin'),
  pfave: phaseNames('pfave'),
  eai: phaseNames('eai'),
  eri: phaseNames('eri'),
  eae: phaseNames('eae'),
  vdc: phaseNames('vdc'),
  idc: phaseNames('idc'),
};
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

interface Ctx {
  /** The simulation's seed (`SimulationOptions.seed`). */
  base: number;
  /** This device's: the simulation's seed mixed with its key. */
  seed: number;
  ts: number;
  /** Seconds, the noise index. */
  t: number;
  resetEveryMs: number;
}

/** Register value at ts: base + integral, or the integral since the last deliberate reset. */
function counter(ctx: Ctx, reg: EnergyRegister, base: number, share = 1): number {
  if (ctx.resetEveryMs > 0) {
    const lastReset = Math.floor(ctx.ts / ctx.resetEveryMs) * ctx.resetEveryMs;
    return round(share * (reg.at(ctx.ts) - reg.at(lastReset)), 3);
  }
  return round(base + share * reg.at(ctx.ts), 3);
}

const SHARES = [0.42, 0.33, 0.25] as const;

/** Per-phase AC gauges for a phase carrying `p` watts. */
function acPhase(ctx: Ctx, values: Record<string, number>, n: number, p: number, pfBase: number): void {
  const { seed, t } = ctx;
  const { hour } = localClock(ctx.ts);
  const v =
    230 +
    2.5 * Math.sin((2 * Math.PI * (hour - 4)) / 24) +
    1.1 * gauss(seed, t, 10 + n) -
    0.0006 * Math.abs(p);
  const pf = clamp(
    pfBase + 0.07 * clamp(Math.abs(p) / 1500, 0, 1) + 0.004 * gauss(seed, t, 20 + n),
    0.5,
    0.995,
  );
  const i = Math.abs(p) / (v * pf);
  const spread = 0.05 + 0.2 * uniform(seed, t, 30 + n);
  values[N.pave[n]!] = round(p, 1);
  values[N.pmax[n]!] = round(p + Math.abs(p) * spread, 1);
  values[N.pmin[n]!] = round(p - Math.abs(p) * spread * 0.8, 1);
  values[N.vave[n]!] = round(v, 1);
  values[N.vmax[n]!] = round(v + 0.4 + 1.5 * uniform(seed, t, 40 + n), 1);
  values[N.vmin[n]!] = round(v - 0.4 - 1.5 * uniform(seed, t, 50 + n), 1);
  values[N.iave[n]!] = round(i, 3);
  values[N.imax[n]!] = round(i * (1 + spread), 3);
  values[N.imin[n]!] = round(i * (1 - spread * 0.8), 3);
  values[N.pfave[n]!] = round(pf, 3);
}

function household(device: SimulatedDevice, ctx: Ctx, scale: number): Record<string, number> {
  const { seed, t } = ctx;
  const reg = register(device.deviceKey, 'load', scale, (ts) => householdPowerW(ts, scale));
  const total = householdPowerW(ctx.ts, scale) * (1 + 0.08 * gauss(seed, t, 1));
  const values: Record<string, number> = {};
  const phases = device.phases === 3 ? SHARES : ([1] as const);
  let sum = 0;
  phases.forEach((share, k) => {
    const n = k + 1;
    const p = total * share * (1 + 0.05 * gauss(seed, t, 2 + n));
    sum += p;
    acPhase(ctx, values, n, p, 0.9);
    values[N.eai[n]!] = counter(ctx, reg, 4000 * share + 500 * n, share);
    values[N.eri[n]!] = counter(ctx, reg, 900 * share, share * 0.27);
  });
  values.frq1 = round(50 + 0.02 * gauss(seed, t, 9), 3);
  if (device.phases === 3) {
    values.power3phases = round(sum, 1);
    values.energy3phases_import = round(values.eai1! + values.eai2! + values.eai3!, 3);
    values.renergy3phases_import = round(values.eri1! + values.eri2! + values.eri3!, 3);
  }
  return values;
}

function solar(device: SimulatedDevice, ctx: Ctx): Record<string, number> {
  const { seed, t } = ctx;
  const kWp = 8;
  const prod = register(device.deviceKey, 'pv', seed, (ts) => solarPowerW(ts, kWp, seed));
  const standby = register(device.deviceKey, 'standby', 0, () => 6);
  const p = Math.max(0, solarPowerW(ctx.ts, kWp, seed) * (1 + 0.03 * gauss(seed, t, 1)));
  const values: Record<string, number> = {};
  for (let n = 1; n <= 3; n++) {
    const pn = p / 3;
    if (pn > 1) acPhase(ctx, values, n, pn, 0.93);
    else {
      values[N.pave[n]!] = 0;
      values[N.iave[n]!] = 0;
      values[N.vave[n]!] = round(231 + 1.1 * gauss(seed, t, 10 + n), 1);
    }
    values[N.eae[n]!] = counter(ctx, prod, 2100, 1 / 3);
    values[N.eai[n]!] = counter(ctx, standby, 15, 1 / 3);
  }
  const producing = p > 20;
  for (let k = 1; k <= 2; k++) {
    const vdc = producing ? 360 + 140 * Math.min(1, p / (kWp * 600)) + 4 * gauss(seed, t, 60 + k) : 0;
    values[N.vdc[k]!] = round(vdc, 1);
    values[N.idc[k]!] = producing ? round(p / 2 / 0.97 / vdc, 3) : 0;
  }
  values.power3phases = round(p, 1);
  values.energy3phases_export = round(values.eae1! + values.eae2! + values.eae3!, 3);
  values.energy3phases_import = round(values.eai1! + values.eai2! + values.eai3!, 3);
  values.frq1 = round(50 + 0.02 * gauss(seed, t, 9), 3);
  return values;
}

function heatPump(device: SimulatedDevice, ctx: Ctx): Record<string, number> {
  const { seed, t } = ctx;
  const reg = register(device.deviceKey, 'hp', 0, heatPumpPowerW);
  const p = heatPumpPowerW(ctx.ts) * (1 + 0.06 * gauss(seed, t, 1));
  const values: Record<string, number> = {};
  let sum = 0;
  for (let n = 1; n <= 3; n++) {
    const pn = (p / 3) * (1 + 0.02 * gauss(seed, t, 2 + n));
    sum += pn;
    values[N.pave[n]!] = round(pn, 1);
    values[N.eai[n]!] = counter(ctx, reg, 1200 + 10 * n, 1 / 3);
  }
  values.power3phases = round(sum, 1);
  values.energy3phases_import = round(values.eai1! + values.eai2! + values.eai3!, 3);
  return values;
}

/** What the demo home uses that no sub-meter measures (lights, the fridge, the router), in watts. */
const UNMETERED_W = 150;
const ROOF_PV_KEY = DEMO_DEVICES.find((d) => d.kind === 'solar')!.deviceKey;

/** A device's seed: the simulation's mixed with its key's hash. */
function deviceSeed(base: number, keyHash: number): number {
  return (base ^ keyHash) >>> 0;
}

/**
 * The demo home's grid connection (docs/domain.md §Energy flows): the house main meter's load, the heat
 * pump and what no sub-meter measures, less the roof's 8 kWp of PV — so the home's flows add up — imported
 * and exported per phase.
 */
function gridConnection(device: SimulatedDevice, ctx: Ctx): Record<string, number> {
  const { seed, t } = ctx;
  // The roof's PV under the same sky as its own meter sees (its seed).
  const pvSeed = deviceSeed(ctx.base, hashString(ROOF_PV_KEY));
  const net = (ts: number) =>
    householdPowerW(ts, 1) + heatPumpPowerW(ts) + UNMETERED_W - solarPowerW(ts, 8, pvSeed);
  const imp = register(device.deviceKey, 'imp', seed, (ts) => Math.max(0, net(ts)));
  const exp = register(device.deviceKey, 'exp', seed, (ts) => Math.max(0, -net(ts)));
  const p = net(ctx.ts) + 60 * gauss(seed, t, 1);
  const values: Record<string, number> = {};
  let sum = 0;
  for (let n = 1; n <= 3; n++) {
    const pn = p / 3 + 25 * gauss(seed, t, 2 + n);
    sum += pn;
    values[N.pave[n]!] = round(pn, 1);
    values[N.eai[n]!] = counter(ctx, imp, 3000 + 100 * n, 1 / 3);
    values[N.eae[n]!] = counter(ctx, exp, 800 + 50 * n, 1 / 3);
  }
  values.power3phases = round(sum, 1);
  values.energy3phases_import = round(values.eai1! + values.eai2! + values.eai3!, 3);
  values.energy3phases_export = round(values.eae1! + values.eae2! + values.eae3!, 3);
  values.energy3phases = round(values.energy3phases_import - values.energy3phases_export, 3);
  return values;
}

const CYCLE_S = 40 * 60;

function thermostat(ctx: Ctx): Record<string, number> {
  const { seed, t } = ctx;
  const { hour, weekday } = localClock(ctx.ts);
  const wakeUp = weekday >= 6 ? 7.5 : 6;
  const tempset = hour >= wakeUp && hour < 22 ? 21 : 18;
  const heating = outdoorTempC(ctx.ts) < 15;
  const phase = (2 * Math.PI * (t % CYCLE_S)) / CYCLE_S;
  const tempmain = heating
    ? tempset - 0.35 * Math.cos(phase) + 0.08 * gauss(seed, t, 1)
    : clamp(22 + 0.3 * (outdoorTempC(ctx.ts) - 15), 18, 29) + 0.1 * gauss(seed, t, 1);
  return { tempmain: round(tempmain, 2), tempset, rel1: heating && Math.sin(phase) > 0 ? 1 : 0 };
}

const keyHashes = new Map<string, number>();

/** The reading a simulated device reports at `ts`; deterministic given the seed. */
export function simulatedReading(device: SimulatedDevice, ts: number, state?: SimulationOptions): Reading {
  let keyHash = keyHashes.get(device.deviceKey);
  if (keyHash === undefined) {
    keyHash = hashString(device.deviceKey);
    keyHashes.set(device.deviceKey, keyHash);
  }
  const base = state?.seed ?? 1;
  const seed = deviceSeed(base, keyHash);
  const ctx: Ctx = {
    base,
    seed,
    ts,
    t: Math.floor(ts / 1000),
    resetEveryMs: (state?.counterResetEveryDays ?? 0) * DAY_MS,
  };
  let values: Record<string, number>;
  switch (device.kind) {
    case 'three-phase':
      values = household(device, ctx, 1);
      break;
    case 'single-phase':
      values = household(device, ctx, device.phases === 1 ? 0.35 : 1);
      break;
    case 'solar':
      values = solar(device, ctx);
      break;
    case 'thermostat':
      values = thermostat(ctx);
      break;
    case 'energy':
      values = device.typeCode === 16 ? gridConnection(device, ctx) : heatPump(device, ctx);
      break;
  }
  return { deviceKey: device.deviceKey, ts, values };
}

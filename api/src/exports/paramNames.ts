/**
 * English names of the stored parameters for export files (docs/domain.md §Parameters): the CSV's first
 * header row and the PDF's tables say "Voltage L1 (V)" where scripts read `vave1`. They follow the names
 * the web client shows in English (web/src/i18n/locales/devices/en.ts); a code the catalogue lacks is
 * written as is.
 */
import { paramDef } from '@kilowatch/core';

const STEMS: Record<string, string> = {
  pave: 'Power',
  pmax: 'Power, max',
  pmin: 'Power, min',
  vave: 'Voltage',
  vmax: 'Voltage, max',
  vmin: 'Voltage, min',
  iave: 'Current',
  imax: 'Current, max',
  imin: 'Current, min',
  pfave: 'Power factor',
  pfmax: 'Power factor, max',
  pfmin: 'Power factor, min',
  eai: 'Active energy import',
  eae: 'Active energy export',
  eri: 'Reactive energy import',
  ere: 'Reactive energy export',
};

const SINGLE: Record<string, string> = {
  energy3phases_import: 'Active energy import, total',
  energy3phases_export: 'Active energy export, total',
  energy3phases: 'Active energy balance, total',
  renergy3phases_import: 'Reactive energy import, total',
  renergy3phases_export: 'Reactive energy export, total',
  renergy3phases: 'Reactive energy balance, total',
  power3phases: 'Power, total',
  frq1: 'Frequency',
  tempmain: 'Temperature',
  tempset: 'Set temperature',
  rel1: 'Output relay',
  alarm: 'Alarm',
  balance: 'Balance',
};

/** The parameter's name without its unit ("Voltage L1"). */
export function exportParamName(code: string): string {
  const single = SINGLE[code];
  if (single) return single;
  const dc = /^(vdc|idc)(\d)$/.exec(code);
  if (dc) return `${dc[1] === 'vdc' ? 'DC voltage' : 'DC current'} ${dc[2]}`;
  const def = paramDef(code);
  const stem = def?.stem ? STEMS[def.stem] : undefined;
  if (stem && def?.phase) return `${stem} L${def.phase}`;
  return code;
}

/** The parameter's unit, '' for unitless ones (the power factor, a relay's state). */
export function exportParamUnit(code: string): string {
  return paramDef(code)?.unit ?? '';
}

/** The name with its unit: "Voltage L1 (V)", "Power factor L1". */
export function exportParamLabel(code: string): string {
  const unit = exportParamUnit(code);
  return unit ? `${exportParamName(code)} (${unit})` : exportParamName(code);
}

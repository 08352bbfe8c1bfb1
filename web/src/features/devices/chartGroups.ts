/** Which charts each details page draws (docs/spec.md §2 screen content), per phase or summed. */
import { COMBINED_PARAMS, unitOf } from '@kilowatch/core';
import type { SeriesSpec } from '../../charts/options.ts';
import { PHASE_COLORS, SERIES_COLORS } from '../../charts/palette.ts';
import type { MessageId } from '../../i18n/i18n.ts';

export type DetailsKind = 'three-phase' | 'single-phase' | 'solar' | 'thermostat' | 'energy';
export type PhaseView = 'phase' | 'sum';

export interface ChartGroup {
  id: string;
  title: MessageId;
  /** Parameters to request from `/series`. */
  params: string[];
  specs: Omit<SeriesSpec, 'label'>[];
  /** Labels: phase numbers or message ids. */
  labels: ({ phase: number } | { id: MessageId })[];
  voltageLimits?: boolean;
}

const PHASES = [1, 2, 3] as const;

function phased(
  id: string,
  title: MessageId,
  stem: string,
  phases: readonly number[],
  band: boolean,
  limits = false,
): ChartGroup {
  const params = phases.map((p) => `${stem}${p}`);
  return {
    id,
    title,
    params,
    specs: params.map((param, i) => ({
      param,
      unit: unitOf(param) ?? '',
      color: PHASE_COLORS[i] ?? '#868e96',
      band,
    })),
    labels: phases.map((phase) => ({ phase })),
    voltageLimits: limits,
  };
}

function summed(id: string, title: MessageId, stem: string, band: boolean, limits = false): ChartGroup {
  const def = COMBINED_PARAMS.find((p) => p.name === stem);
  return {
    id,
    title,
    params: [stem],
    specs: [{ param: stem, unit: def?.unit ?? '', color: PHASE_COLORS[0], band }],
    labels: [{ id: 'details.all' }],
    voltageLimits: limits,
  };
}

function single(
  id: string,
  title: MessageId,
  items: { param: string; label: MessageId; stepped?: boolean }[],
  band = false,
): ChartGroup {
  return {
    id,
    title,
    params: items.map((i) => i.param),
    specs: items.map((i, k) => ({
      param: i.param,
      unit: unitOf(i.param) ?? '',
      color: SERIES_COLORS[k] ?? '#868e96',
      band: band && !i.stepped,
      stepped: i.stepped,
    })),
    labels: items.map((i) => ({ id: i.label })),
  };
}

export function chartGroups(kind: DetailsKind, view: PhaseView): ChartGroup[] {
  switch (kind) {
    case 'three-phase':
      return view === 'phase'
        ? [
            phased('voltage', 'details.voltage', 'vave', PHASES, true, true),
            phased('current', 'details.current', 'iave', PHASES, true),
            phased('power', 'details.power', 'pave', PHASES, true),
            phased('pf', 'details.powerFactor', 'pfave', PHASES, false),
          ]
        : [
            summed('voltage', 'details.voltage', 'vave', true, true),
            summed('current', 'details.current', 'iave', true),
            summed('power', 'details.power', 'pave', true),
            summed('pf', 'details.powerFactor', 'pfave', false),
          ];
    case 'single-phase':
      return [
        phased('voltage', 'details.voltage', 'vave', [1], true, true),
        phased('current', 'details.current', 'iave', [1], true),
        phased('power', 'details.power', 'pave', [1], true),
        phased('pf', 'details.powerFactor', 'pfave', [1], false),
      ];
    case 'solar':
      return [
        view === 'phase'
          ? phased('power', 'details.production', 'pave', PHASES, true)
          : summed('power', 'details.production', 'pave', true),
        single('dcv', 'details.dcVoltage', [
          { param: 'vdc1', label: 'details.dcVoltage' },
          { param: 'vdc2', label: 'details.dcVoltage' },
          { param: 'vdc3', label: 'details.dcVoltage' },
        ]),
        single('dci', 'details.dcCurrent', [
          { param: 'idc1', label: 'details.dcCurrent' },
          { param: 'idc2', label: 'details.dcCurrent' },
        ]),
      ];
    case 'thermostat':
      return [
        single(
          'temp',
          'details.temperature',
          [
            { param: 'tempmain', label: 'details.temperature' },
            { param: 'tempset', label: 'details.setPoint', stepped: true },
          ],
          true,
        ),
        single('relay', 'details.relay', [{ param: 'rel1', label: 'details.relay', stepped: true }]),
      ];
    case 'energy':
      return [
        view === 'phase'
          ? phased('power', 'details.power', 'pave', PHASES, true)
          : summed('power', 'details.power', 'pave', true),
      ];
  }
}

/** Kinds that offer the per-phase / summed switch. */
export function hasPhaseView(kind: DetailsKind): boolean {
  return kind === 'three-phase' || kind === 'solar' || kind === 'energy';
}

/** Details kinds that show energy (bars and the today / month / year / total cards). */
export function hasEnergy(kind: DetailsKind): boolean {
  return kind !== 'thermostat';
}

/** The details kind a path belongs to (docs/spec.md §2 routes). */
export function kindFromPath(pathname: string): DetailsKind {
  if (pathname.startsWith('/device-energy-details')) return 'energy';
  if (pathname.startsWith('/solar-device-details')) return 'solar';
  if (pathname.startsWith('/thermo-device-details')) return 'thermostat';
  if (pathname.startsWith('/single-phase-device-details')) return 'single-phase';
  return 'three-phase';
}

/**
 * What the location's Energy view draws from a flows answer (docs/api.md §Energy flows): the flow
 * diagram's nodes and links, the home's consumption by source per interval.
 */
import type { FlowAllocation, Flows } from '@kilowatch/core';

/** Where energy comes from and goes to: a battery and the grid appear on both sides, as two nodes each. */
export const FLOW_NODES = ['production', 'batteryOut', 'gridIn', 'home', 'batteryIn', 'gridOut'] as const;
export type FlowNode = (typeof FLOW_NODES)[number];

const LINKS: readonly [keyof FlowAllocation, FlowNode, FlowNode][] = [
  ['productionToHome', 'production', 'home'],
  ['productionToBattery', 'production', 'batteryIn'],
  ['productionToGrid', 'production', 'gridOut'],
  ['batteryToHome', 'batteryOut', 'home'],
  ['batteryToGrid', 'batteryOut', 'gridOut'],
  ['gridToHome', 'gridIn', 'home'],
  ['gridToBattery', 'gridIn', 'batteryIn'],
];

/** Below this a flow is not drawn (a thousandth of a kWh). */
const DRAWN_KWH = 0.001;

export interface SankeyData {
  nodes: { id: FlowNode }[];
  links: { source: FlowNode; target: FlowNode; value: number }[];
}

/** The flow diagram: only flows that carried energy, only nodes they join (empty when nothing flowed). */
export function sankeyData(flows: FlowAllocation | null): SankeyData {
  if (!flows) return { nodes: [], links: [] };
  const links = LINKS.filter(([key]) => flows[key] >= DRAWN_KWH).map(([key, source, target]) => ({
    source,
    target,
    value: flows[key],
  }));
  const used = new Set(links.flatMap((l) => [l.source, l.target]));
  return { nodes: FLOW_NODES.filter((n) => used.has(n)).map((id) => ({ id })), links };
}

export type SourceBar = {
  t: string;
  productionToHome: number;
  batteryToHome: number;
  gridToHome: number;
};

/** The home's consumption per interval by where it came from (intervals without a known allocation as 0). */
export function consumptionBySource(f: Flows): SourceBar[] {
  return f.t.map((t, i) => ({
    t,
    productionToHome: f.flows.productionToHome[i] ?? 0,
    batteryToHome: f.flows.batteryToHome[i] ?? 0,
    gridToHome: f.flows.gridToHome[i] ?? 0,
  }));
}

/** The untracked share of the home's consumption (0–1), null without consumption. */
export function untrackedShare(totals: Flows['totals']): number | null {
  const { consumption, untracked } = totals;
  if (consumption === null || untracked === null || consumption <= 0) return null;
  return untracked / consumption;
}

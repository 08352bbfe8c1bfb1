/** Turkish messages of the analytics screens, merged into ../tr.ts. */
import type { analyticsEn } from './en.ts';

export const analyticsTr: Record<keyof typeof analyticsEn, string> = {};

/** Turkish messages of the places screens, merged into ../tr.ts. */
import type { placesEn } from './en.ts';

export const placesTr: Record<keyof typeof placesEn, string> = {};

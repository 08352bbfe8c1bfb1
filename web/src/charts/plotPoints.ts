/**
 * How many points a chart asks the API for (`points`, docs/api.md §Telemetry): its plot width in device
 * pixels, the CSS width rounded up to whole steps of `POINTS_STEP_PX` (so a resize does not ask again for
 * every pixel) times the device pixel ratio, within the range the API takes.
 */
import { MAX_POINTS, MIN_POINTS } from '@kilowatch/core';
import { useLayoutEffect, useRef, useState } from 'react';
import { RESIZE_DEBOUNCE_MS } from './UPlotChart.tsx';

export const POINTS_STEP_PX = 64;

/** `points` for a plot `cssWidth` CSS pixels wide; undefined while the width is unknown (0). */
export function plotPoints(cssWidth: number, pixelRatio: number): number | undefined {
  if (!(cssWidth > 0)) return undefined;
  const stepped = Math.ceil(cssWidth / POINTS_STEP_PX) * POINTS_STEP_PX;
  const ratio = pixelRatio > 0 && Number.isFinite(pixelRatio) ? pixelRatio : 1;
  return Math.min(MAX_POINTS, Math.max(MIN_POINTS, Math.round(stepped * ratio)));
}

/**
 * `points` for the element `ref` is put on (the box the charts are drawn in), following its width.
 * `measured` turns true once it was read, before the first paint: a request waits for it so that it is
 * not made twice, once without `points` and once with.
 */
export function usePlotPoints<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [state, setState] = useState<{ measured: boolean; points?: number }>({ measured: false });
  useLayoutEffect(() => {
    const el = ref.current;
    const measure = () => {
      const points = el ? plotPoints(el.clientWidth, window.devicePixelRatio) : undefined;
      setState((s) => (s.measured && s.points === points ? s : { measured: true, points }));
    };
    measure();
    if (!el || typeof ResizeObserver === 'undefined') return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ro = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(measure, RESIZE_DEBOUNCE_MS);
    });
    ro.observe(el);
    return () => {
      clearTimeout(timer);
      ro.disconnect();
    };
  }, []);
  return { ref, ...state };
}

import { type Device, detailsPathFor } from '@kilowatch/core';

/** The client route of a device's details page, which its type decides (docs/spec.md §2). */
export function detailsPath(d: Device): string {
  return detailsPathFor(d.id, d.typeCode, d.phases ?? 3);
}

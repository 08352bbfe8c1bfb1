/** A decode thread whose code fails to load. */
throw new Error('decode thread failed to load');

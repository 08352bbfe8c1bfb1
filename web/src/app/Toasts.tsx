import { em, useMantineTheme } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { Notifications } from '@mantine/notifications';

/**
 * Where toasts appear, away from a form's actions (which sit at the bottom right of their card): bottom left
 * beside the navigation on a wide screen, at the top below the header on a phone (the navigation is
 * folded away there and the actions are at the bottom). toasts.css lets the pointer through them, so a
 * toast closes on its own while the pointer rests on it and never takes a click meant for what is below.
 */
export function Toasts() {
  const theme = useMantineTheme();
  const phone = useMediaQuery(`(max-width: ${em(theme.breakpoints.xs)})`, false, {
    getInitialValueInEffect: false,
  });
  return <Notifications position={phone ? 'top-center' : 'bottom-left'} />;
}

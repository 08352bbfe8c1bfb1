import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import 'uplot/dist/uPlot.min.css';
import './app/toasts.css';
import { I18nProvider } from '@lingui/react';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { retryRead } from './api/client.ts';
import { buildRouter } from './app/router.tsx';
import { Toasts } from './app/Toasts.tsx';
import { colorSchemeManager, cssVariablesResolver, theme } from './app/theme.ts';
import { HubProvider } from './hub/live.tsx';
import { activateLanguage, i18n, storedLanguage } from './i18n/i18n.ts';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      refetchOnWindowFocus: false,
      ...retryRead,
    },
  },
});
const router = buildRouter(queryClient);

await activateLanguage(storedLanguage());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider
      theme={theme}
      defaultColorScheme="auto"
      colorSchemeManager={colorSchemeManager}
      cssVariablesResolver={cssVariablesResolver}
    >
      <I18nProvider i18n={i18n}>
        <Toasts />
        <QueryClientProvider client={queryClient}>
          <HubProvider>
            <RouterProvider router={router} />
          </HubProvider>
        </QueryClientProvider>
      </I18nProvider>
    </MantineProvider>
  </StrictMode>,
);

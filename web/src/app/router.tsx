/** The route tree, built from SCREENS: sign-in pages in their own layout, everything else behind the token. */
import type { QueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Navigate,
  Outlet,
  redirect,
} from '@tanstack/react-router';
import * as v from 'valibot';
import { verifyToken } from '../api/account/verify-token.ts';
import { setNavigator } from '../api/client.ts';
import { clearAuth, isSignedIn } from '../auth/session.ts';
import { RouteError, RoutePending } from '../shared/ui/RouteStates.tsx';
import { loadThroughCancels } from './loaders.ts';
import { SCREENS, screenFor } from './screens.ts';

const root = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: Outlet,
  notFoundComponent: () => <Navigate to="/404" replace />,
});

export const SignInSearchSchema = v.object({
  view: v.optional(v.picklist(['sign-in', 'sign-up', 'forgot', 'reset'])),
  token: v.optional(v.string()),
  redirect: v.optional(v.string()),
});

const signInLayout = createRoute({
  getParentRoute: () => root,
  id: 'sign-in-layout',
  component: lazyRouteComponent(() => import('../features/auth/SignInLayout.tsx')),
});

const signInPage = lazyRouteComponent(() => import('../features/auth/SignInPage.tsx'));
const signInRoutes = ['/sign-in', '/sign-in-fox'].map((path) =>
  createRoute({
    getParentRoute: () => signInLayout,
    path,
    validateSearch: SignInSearchSchema,
    component: signInPage,
  }),
);

// The link mailed by forgot_password (docs/api.md §Account) opens the reset form of the sign-in page.
const resetPasswordRoute = createRoute({
  getParentRoute: () => signInLayout,
  path: '/reset-password',
  validateSearch: v.object({ token: v.optional(v.string()) }),
  beforeLoad: ({ search }) => {
    throw redirect({
      to: '/sign-in',
      search: search.token ? { view: 'reset', token: search.token } : { view: 'forgot' },
      replace: true,
    });
  },
});

const shell = lazyRouteComponent(() => import('../features/shell/Shell.tsx'));

const appLayout = createRoute({
  getParentRoute: () => root,
  id: 'app',
  // docs/spec.md §4: the token is verified before every route change outside the sign-in pages.
  beforeLoad: async ({ location }) => {
    const back = location.href === '/' || location.pathname === '/404' ? undefined : location.href;
    if (!isSignedIn()) throw redirect({ to: '/sign-in', search: { redirect: back } });
    // The router fetches route chunks only once every beforeLoad has resolved; start the shell's and the
    // screen's now so they download while the token is checked (a first visit saves a round of requests).
    // A failed download is left to the router, which loads them again and shows its error state.
    shell.preload?.()?.catch(() => undefined);
    screenFor(location.pathname === '/' ? '/dashboard' : location.pathname)
      ?.load()
      .catch(() => undefined);
    if (!(await verifyToken())) {
      clearAuth();
      throw redirect({ to: '/sign-in', search: { redirect: back } });
    }
  },
  component: shell,
});

const index = createRoute({
  getParentRoute: () => appLayout,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/dashboard' });
  },
});

const screenRoutes = SCREENS.map((screen) =>
  createRoute({
    getParentRoute: () => appLayout,
    path: screen.path,
    staticData: { title: screen.title },
    validateSearch: screen.search,
    loader: screen.loader
      ? ({ context, params }) =>
          loadThroughCancels(
            () =>
              screen.loader?.({
                queryClient: context.queryClient,
                params: params as Record<string, string>,
              }) ?? Promise.resolve(),
          )
      : undefined,
    component: lazyRouteComponent(screen.load),
  }),
);

const routeTree = root.addChildren([
  signInLayout.addChildren([...signInRoutes, resetPasswordRoute]),
  appLayout.addChildren([index, ...screenRoutes]),
]);

export function buildRouter(queryClient: QueryClient) {
  const router = createRouter({
    routeTree,
    context: { queryClient },
    defaultPreload: 'intent',
    defaultPreloadStaleTime: 0,
    defaultPendingComponent: RoutePending,
    defaultErrorComponent: RouteError,
    scrollRestoration: true,
  });
  setNavigator({
    toSignIn: () => void router.navigate({ to: '/sign-in', replace: true }),
    toNotFound: () => void router.navigate({ to: '/404', replace: true }),
  });
  return router;
}

declare module '@tanstack/react-router' {
  interface StaticDataRouteOption {
    title?: import('../i18n/i18n.ts').MessageId;
  }
}

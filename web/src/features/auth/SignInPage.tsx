import {
  Alert,
  Anchor,
  Button,
  Checkbox,
  Divider,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { Link, useNavigate, useRouterState, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useDemoLogin } from '../../api/account/demo.ts';
import { useForgotPassword } from '../../api/account/forgot-password.ts';
import { useLogin } from '../../api/account/login.ts';
import { useRegister } from '../../api/account/register.ts';
import { useResetPassword } from '../../api/account/reset-password.ts';
import { ApiError } from '../../api/client.ts';
import { setCompanionMode } from '../../auth/session.ts';
import {
  activateLanguage,
  hadStoredLanguage,
  isLanguage,
  translateServerMessage,
  useT,
} from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { PasswordWithStrength } from './PasswordStrength.tsx';
import { PASSWORD_MIN_LENGTH } from './passwordStrength.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type View = 'sign-in' | 'sign-up' | 'forgot' | 'reset';

function useSignInSearch(): { view: View; token?: string; redirect?: string } {
  return useSearch({ strict: false }) as { view?: View; token?: string; redirect?: string } as {
    view: View;
    token?: string;
    redirect?: string;
  };
}

function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  return Object.fromEntries(
    Object.entries(err.errors).map(([k, msgs]) => [k, msgs.map(translateServerMessage).join(' ')]),
  );
}

function useAfterSignIn() {
  const navigate = useNavigate();
  const { t } = useT();
  const search = useSignInSearch();
  const fox = useRouterState({ select: (s) => s.location.pathname === '/sign-in-fox' });
  return async (language?: string | null) => {
    setCompanionMode(fox);
    // The profile's language applies unless this device already has a chosen one.
    if (!hadStoredLanguage && isLanguage(language)) await activateLanguage(language);
    notify({ color: 'green', message: t('msg.loginSuccess') });
    const to =
      search.redirect?.startsWith('/') && !search.redirect.startsWith('//') ? search.redirect : '/dashboard';
    await navigate({ to, replace: true });
  };
}

function SignInForm() {
  const { t } = useT();
  const login = useLogin();
  const demo = useDemoLogin();
  const done = useAfterSignIn();
  const fox = useRouterState({ select: (s) => s.location.pathname === '/sign-in-fox' });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [rememberMe, setRememberMe] = useState(true);
  const [touched, setTouched] = useState(false);
  const emailError = touched && !EMAIL.test(email) ? t('val.email') : undefined;
  const passwordError = touched && !password ? t('val.required') : undefined;
  const errors = fieldErrors(login.error);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!EMAIL.test(email) || !password) return;
    try {
      const auth = await login.mutateAsync({ email, password, rememberMe });
      await done(auth.user.language);
    } catch {
      notify({ color: 'red', message: t('msg.loginFailed') });
    }
  };

  const tryDemo = async () => {
    try {
      const auth = await demo.mutateAsync();
      await done(auth.user.language);
    } catch (err) {
      notify({
        color: 'red',
        message: err instanceof ApiError ? translateServerMessage(err.message) : t('msg.loginFailed'),
      });
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Title order={1} fz="h3" ta="center">
          {t(fox ? 'signIn.companion' : 'signIn.title')}
        </Title>
        <Text c="dimmed" size="sm" ta="center">
          {t('signIn.subtitle')}
        </Text>
        {login.isError && (
          <Alert color="red" role="alert" data-testid="sign-in-error">
            {t('msg.loginFailed')}
          </Alert>
        )}
        <TextInput
          label={t('signIn.email')}
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          error={emailError ?? errors.email}
          required
        />
        <PasswordInput
          label={t('signIn.password')}
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
          error={passwordError ?? errors.password}
          required
        />
        <Checkbox
          label={t('signIn.remember')}
          checked={rememberMe}
          onChange={(e) => setRememberMe(e.currentTarget.checked)}
        />
        <Button type="submit" loading={login.isPending} fullWidth>
          {t('signIn.submit')}
        </Button>
        <Anchor component={Link} to="." search={{ view: 'forgot' } as never} size="sm" ta="center">
          {t('signIn.forgot')}
        </Anchor>
        <Divider />
        <Button variant="light" onClick={tryDemo} loading={demo.isPending} fullWidth data-testid="demo">
          {t('signIn.demo')}
        </Button>
        <Text size="sm" ta="center">
          {t('signIn.noAccount')}{' '}
          <Anchor component={Link} to="." search={{ view: 'sign-up' } as never}>
            {t('signIn.signUp')}
          </Anchor>
        </Text>
      </Stack>
    </form>
  );
}

function SignUpForm() {
  const { t, locale } = useT();
  const registerUser = useRegister();
  const done = useAfterSignIn();
  const [fullName, setFullName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const errors = fieldErrors(registerUser.error);
  const err = {
    fullName: touched.fullName && !fullName.trim() ? t('val.required') : errors.fullName,
    email: touched.email && !EMAIL.test(email) ? t('val.email') : errors.email,
    password:
      touched.password && password.length < PASSWORD_MIN_LENGTH
        ? t('val.passwordLength', { min: PASSWORD_MIN_LENGTH })
        : errors.password,
    confirm: touched.confirm && confirm !== password ? t('val.passwordsDiffer') : undefined,
  };
  const valid =
    fullName.trim() && EMAIL.test(email) && password.length >= PASSWORD_MIN_LENGTH && confirm === password;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ fullName: true, email: true, password: true, confirm: true });
    if (!valid) return;
    try {
      const auth = await registerUser.mutateAsync({
        email,
        password,
        fullName,
        language: locale,
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      });
      await done(auth.user.language);
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };
  const blur = (k: string) => () => setTouched((s) => ({ ...s, [k]: true }));

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Title order={1} fz="h3" ta="center">
          {t('signUp.title')}
        </Title>
        <TextInput
          label={t('signUp.fullName')}
          value={fullName}
          onChange={(e) => setFullName(e.currentTarget.value)}
          onBlur={blur('fullName')}
          error={err.fullName}
          autoComplete="name"
          required
        />
        <TextInput
          label={t('signIn.email')}
          type="email"
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
          onBlur={blur('email')}
          error={err.email}
          autoComplete="email"
          required
        />
        <PasswordWithStrength
          label={t('signIn.password')}
          value={password}
          onChange={setPassword}
          onBlur={blur('password')}
          error={err.password}
        />
        <PasswordInput
          label={t('signUp.confirm')}
          value={confirm}
          onChange={(e) => setConfirm(e.currentTarget.value)}
          onBlur={blur('confirm')}
          error={err.confirm}
          autoComplete="new-password"
          required
        />
        <Button type="submit" loading={registerUser.isPending} fullWidth>
          {t('signUp.submit')}
        </Button>
        <Text size="sm" ta="center">
          {t('signUp.haveAccount')}{' '}
          <Anchor component={Link} to="." search={{} as never}>
            {t('signIn.submit')}
          </Anchor>
        </Text>
      </Stack>
    </form>
  );
}

function ForgotForm() {
  const { t } = useT();
  const forgot = useForgotPassword();
  const [email, setEmail] = useState('');
  const [touched, setTouched] = useState(false);
  const error = touched && !EMAIL.test(email) ? t('val.email') : undefined;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (EMAIL.test(email)) forgot.mutate(email);
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Title order={1} fz="h3" ta="center">
          {t('reset.title')}
        </Title>
        {forgot.isSuccess ? (
          <Alert color="green" role="status">
            {t('reset.sent')}
          </Alert>
        ) : (
          <>
            <Text size="sm" c="dimmed">
              {t('reset.intro')}
            </Text>
            {forgot.isError && <ErrorAlert error={forgot.error} />}
            <TextInput
              label={t('signIn.email')}
              type="email"
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              onBlur={() => setTouched(true)}
              error={error}
              autoComplete="email"
              required
            />
            <Button type="submit" loading={forgot.isPending} fullWidth>
              {t('reset.send')}
            </Button>
          </>
        )}
        <Anchor component={Link} to="." search={{} as never} size="sm" ta="center">
          {t('reset.backToSignIn')}
        </Anchor>
      </Stack>
    </form>
  );
}

function ErrorAlert({ error }: { error: unknown }) {
  const { t } = useT();
  return (
    <Alert color="red" role="alert">
      {error instanceof ApiError ? translateServerMessage(error.message) : t('msg.internal')}
    </Alert>
  );
}

function ResetForm({ token }: { token: string }) {
  const { t } = useT();
  const reset = useResetPassword();
  const [password, setPassword] = useState('');
  const [touched, setTouched] = useState(false);
  // A refusal of the password itself (a common one) shows on the field; others, such as a spent link, above.
  const refused = fieldErrors(reset.error).password;
  const error =
    touched && password.length < PASSWORD_MIN_LENGTH
      ? t('val.passwordLength', { min: PASSWORD_MIN_LENGTH })
      : refused;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (password.length >= PASSWORD_MIN_LENGTH) reset.mutate({ token, password });
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Title order={1} fz="h3" ta="center">
          {t('reset.title')}
        </Title>
        {reset.isSuccess ? (
          <Alert color="green" role="status">
            {t('reset.done')}
          </Alert>
        ) : (
          <>
            <Text size="sm" c="dimmed" data-testid="reset-ends-access">
              {t('reset.endsAccess')}
            </Text>
            {reset.isError && !refused && <ErrorAlert error={reset.error} />}
            <PasswordWithStrength
              label={t('reset.newPassword')}
              value={password}
              onChange={setPassword}
              onBlur={() => setTouched(true)}
              error={error}
            />
            <Button type="submit" loading={reset.isPending} fullWidth>
              {t('reset.setPassword')}
            </Button>
          </>
        )}
        <Anchor component={Link} to="." search={{} as never} size="sm" ta="center">
          {t('reset.backToSignIn')}
        </Anchor>
      </Stack>
    </form>
  );
}

export default function SignInPage() {
  const search = useSignInSearch();
  switch (search.view) {
    case 'sign-up':
      return <SignUpForm />;
    case 'forgot':
      return <ForgotForm />;
    case 'reset':
      return search.token ? <ResetForm token={search.token} /> : <ForgotForm />;
    default:
      return <SignInForm />;
  }
}

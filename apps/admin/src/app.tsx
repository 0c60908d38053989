/** The dashboard: who may see it, its frame (navigation, live status) and its screens by route. */
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { HashRouter, Navigate, NavLink, Route, Routes, useLocation } from 'react-router'
import { LiveEventsProvider, useLiveEvents } from './live'
import { Activity } from './screens/activity'
import { Attributes } from './screens/attributes'
import { CollectionEdit, Collections } from './screens/collections'
import { CustomerDetail, Customers } from './screens/customers'
import { OrderDetail } from './screens/order-detail'
import { Orders } from './screens/orders'
import { ProductEdit } from './screens/product-edit'
import { Products } from './screens/products'
import { Promotions } from './screens/promotions'
import { Settings } from './screens/settings'
import { SignIn } from './screens/sign-in'
import { WebhookDetail, Webhooks } from './screens/webhooks'
import { endsSession, SessionProvider, useSession } from './session'

export function App() {
  return (
    <SessionProvider>
      <SignedInOrNot />
    </SessionProvider>
  )
}

function SignedInOrNot() {
  const { user, signOut } = useSession()
  // One cache per session: nothing of a signed-out session shows in the next one.
  const [queryClient, setQueryClient] = useState<QueryClient>()
  useEffect(() => {
    if (!user) return setQueryClient(undefined)
    const onError = (error: unknown) => {
      if (endsSession(error)) signOut('Your session ended. Sign in again.')
    }
    setQueryClient(
      new QueryClient({
        queryCache: new QueryCache({ onError }),
        mutationCache: new MutationCache({ onError }),
        defaultOptions: { queries: { staleTime: 10_000, retry: false, refetchOnWindowFocus: true } },
      }),
    )
  }, [user, signOut])

  if (!user) return <SignIn />
  if (!queryClient) return null
  return (
    <QueryClientProvider client={queryClient}>
      <LiveEventsProvider>
        <HashRouter>
          <Frame email={user.email} />
        </HashRouter>
      </LiveEventsProvider>
    </QueryClientProvider>
  )
}

const NAVIGATION = [
  ['/orders', 'Orders'],
  ['/products', 'Products'],
  ['/collections', 'Collections'],
  ['/attributes', 'Attributes'],
  ['/customers', 'Customers'],
  ['/promotions', 'Promotions'],
  ['/activity', 'Activity'],
  ['/settings', 'Settings'],
  ['/webhooks', 'Webhooks'],
] as const

function Frame({ email }: { email: string }) {
  const { signOut } = useSession()
  const location = useLocation()
  // A new screen: focus its title, so that a screen reader says where the user now is.
  useEffect(() => {
    document.getElementById('page-title')?.focus()
  }, [location.pathname])
  return (
    <div className="frame">
      <a className="skip-link" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header className="top-bar">
        <span className="brand">Commerce admin</span>
        <LiveIndicator />
        <span className="muted small account">{email}</span>
        <button type="button" className="button button-quiet" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <nav className="side-nav" aria-label="Main">
        <ul>
          {NAVIGATION.map(([to, label]) => (
            <li key={to}>
              <NavLink to={to}>{label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Routes>
          <Route path="/" element={<Navigate to="/orders" replace />} />
          <Route path="/orders" element={<Orders />} />
          <Route path="/orders/:id" element={<OrderDetail />} />
          <Route path="/products" element={<Products />} />
          <Route path="/products/new" element={<ProductEdit />} />
          <Route path="/products/:id" element={<ProductEdit />} />
          <Route path="/collections" element={<Collections />} />
          <Route path="/collections/new" element={<CollectionEdit />} />
          <Route path="/collections/:id" element={<CollectionEdit />} />
          <Route path="/attributes" element={<Attributes />} />
          <Route path="/customers" element={<Customers />} />
          <Route path="/customers/:id" element={<CustomerDetail />} />
          <Route path="/promotions" element={<Promotions />} />
          <Route path="/activity" element={<Activity />} />
          <Route path="/settings" element={<Settings />} />
          <Route path="/webhooks" element={<Webhooks />} />
          <Route path="/webhooks/:id" element={<WebhookDetail />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
    </div>
  )
}

function LiveIndicator() {
  const { status } = useLiveEvents()
  const text = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', ended: 'Live updates stopped' }[status]
  return (
    <span className={`live live-${status}`} role="status" aria-label={`Live updates: ${text}`}>
      <span className="live-dot" aria-hidden="true" />
      {text}
    </span>
  )
}

function NotFound() {
  return (
    <>
      <h1 tabIndex={-1} id="page-title">
        Not found
      </h1>
      <p>
        There is no such screen. <NavLink to="/orders">Go to the orders</NavLink>.
      </p>
    </>
  )
}

import { testDatabaseSetup } from '@commerce/db/testing'

// What the setup gives every test file: inject('adminUrl') and inject('template').
declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string
    template: string
  }
}

export default testDatabaseSetup('admin')

import { testDatabaseSetup } from '../src/testing.js'

// What the setup gives every test file: inject('adminUrl') and inject('template').
declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string
    template: string
  }
}

export default testDatabaseSetup('db')

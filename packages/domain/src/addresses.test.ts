import { describe, expect, it } from 'vitest'
import { isPublicAddress } from './addresses.js'

describe('isPublicAddress', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '[2a00:1450:4001:80b::200e]',
    '::ffff:8.8.8.8',
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })

  it.each([
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '192.0.2.10',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1%eth0',
    'ff02::1',
    '2001:db8::1',
    '::127.0.0.1',
  ])('%s is refused', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(['localhost', '', '1.2.3', '1.2.3.256', '::1::', '12345::', 'example.com', '2130706433'])('%s does not parse: refused', (text) => {
    expect(isPublicAddress(text)).toBe(false)
  })
})

import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { compareVersions, isMajorJump, parseSemVer } from '../../../src/release/index.js'

describe('semantic versions', () => {
  test('parses MAJOR.MINOR.PATCH with pre-release and build metadata, and a leading v', () => {
    assert.deepEqual(parseSemVer('1.2.3'), { major: 1, minor: 2, patch: 3, prerelease: [] })
    assert.deepEqual(parseSemVer('v2.2.0-alpha.1+build.7'), { major: 2, minor: 2, patch: 0, prerelease: ['alpha', '1'] })
    for (const bad of ['1.2', '1.2.3.4', '01.2.3', '1.2.3-', '1.2.3-01', 'latest', '', '1.2.3 ', 'x1.2.3']) {
      assert.equal(parseSemVer(bad), undefined, bad)
    }
  })

  test('precedence follows semver.org: numeric fields, then pre-releases below their release', () => {
    const ordered = [
      '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0',
      '1.0.1', '1.2.0', '1.10.0', '2.0.0'
    ]
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        assert.equal(Math.sign(compareVersions(ordered[i], ordered[j])), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`)
      }
    }
    assert.equal(compareVersions('1.0.0+a', '1.0.0+b'), 0, 'build metadata does not count')
    assert.throws(() => compareVersions('1.0', '1.0.0'), /not a semantic version/)
  })

  test('a major jump is a change of the major number, up or down', () => {
    assert.equal(isMajorJump('1.9.9', '2.0.0'), true)
    assert.equal(isMajorJump('0.1.0', '1.0.0'), true)
    assert.equal(isMajorJump('1.0.0', '1.5.0-rc.1'), false)
    assert.equal(isMajorJump('0.1.0', '0.2.0'), false)
  })
})

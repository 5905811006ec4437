// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@openzeppelin/contracts/access/Ownable.sol";
import "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/**
 * The set of keys whose signatures a paymaster accepts, managed by its owner.
 *
 * A set rather than one key, so that a rotation loses nothing in flight: the owner adds the new key, the service moves
 * to it, and the old key is removed only once the operations it signed have been mined or expired. With a single key,
 * replacing it invalidates every signature already handed out.
 *
 * No key is a constructor argument: a paymaster's CREATE2 address then depends only on its code, its EntryPoint and its
 * owner, and is the same on every chain for one owner, whichever service key signs there.
 */
abstract contract SignerSet is Ownable {
    /// Whether `signer`'s signatures are accepted.
    mapping(address => bool) public isSigner;

    /// How many keys are in the set, so that a reader can tell an empty set (nothing can be sponsored) at a glance.
    uint256 public signerCount;

    event SignerAdded(address indexed signer);
    event SignerRemoved(address indexed signer);

    function addSigner(address signer) external onlyOwner {
        require(signer != address(0), "SignerSet: signer is zero");
        require(!isSigner[signer], "SignerSet: already a signer");
        isSigner[signer] = true;
        signerCount += 1;
        emit SignerAdded(signer);
    }

    function removeSigner(address signer) external onlyOwner {
        require(isSigner[signer], "SignerSet: not a signer");
        isSigner[signer] = false;
        signerCount -= 1;
        emit SignerRemoved(signer);
    }

    /**
     * Whether `signature` is an EIP-191 personal_sign over `hash` by a key in the set. A malformed signature (wrong
     * length, v not 27/28, high s) is a plain false, so that validation reports SIG_VALIDATION_FAILED rather than
     * reverting.
     */
    function _signedByASigner(bytes32 hash, bytes memory signature) internal view returns (bool) {
        (address recovered, ECDSA.RecoverError error) = ECDSA.tryRecover(ECDSA.toEthSignedMessageHash(hash), signature);
        return error == ECDSA.RecoverError.NoError && isSigner[recovered];
    }
}

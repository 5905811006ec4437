// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@openzeppelin/contracts/interfaces/IERC1271.sol";
import "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IAccount.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IEntryPoint.sol";

/**
 * The smallest smart account for EntryPoint v0.7 and later that answers ERC-1271, for the tests of a permit signed by a
 * contract account. The reference SimpleAccount of eth-infinitism (0.7, 0.8 and 0.9) has no isValidSignature, so a
 * USDC-style token cannot accept its permit; wallets' accounts (Safe, Kernel, Nexus, Simple7702Account) have one.
 * One owner key: it signs the userOpHash with EIP-191, and anything else (a permit's EIP-712 digest) raw.
 */
contract Erc1271TestAccount is IAccount, IERC1271 {
    IEntryPoint public immutable entryPoint;
    address public immutable owner;

    constructor(IEntryPoint entryPoint_, address owner_) {
        entryPoint = entryPoint_;
        owner = owner_;
    }

    receive() external payable {}

    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        returns (uint256 validationData)
    {
        require(msg.sender == address(entryPoint), "Erc1271TestAccount: not from the EntryPoint");
        validationData = _signedByOwner(ECDSA.toEthSignedMessageHash(userOpHash), userOp.signature) ? 0 : 1;
        if (missingAccountFunds > 0) {
            (bool paid,) = payable(msg.sender).call{value: missingAccountFunds}("");
            (paid); // the EntryPoint checks the prefund itself
        }
    }

    function execute(address target, uint256 value, bytes calldata data) external {
        require(msg.sender == address(entryPoint), "Erc1271TestAccount: not from the EntryPoint");
        (bool ok, bytes memory result) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        return _signedByOwner(hash, signature) ? this.isValidSignature.selector : bytes4(0xffffffff);
    }

    function _signedByOwner(bytes32 hash, bytes memory signature) private view returns (bool) {
        (address recovered, ECDSA.RecoverError error) = ECDSA.tryRecover(hash, signature);
        return error == ECDSA.RecoverError.NoError && recovered == owner;
    }
}

/// Deploys Erc1271TestAccount at a CREATE2 address known in advance, so an operation's initCode can create it.
contract Erc1271TestAccountFactory {
    IEntryPoint public immutable entryPoint;

    constructor(IEntryPoint entryPoint_) {
        entryPoint = entryPoint_;
    }

    function createAccount(address owner, uint256 salt) external returns (Erc1271TestAccount) {
        address account = getAddress(owner, salt);
        if (account.code.length > 0) return Erc1271TestAccount(payable(account));
        return new Erc1271TestAccount{salt: bytes32(salt)}(entryPoint, owner);
    }

    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes32 initCodeHash =
            keccak256(abi.encodePacked(type(Erc1271TestAccount).creationCode, abi.encode(entryPoint, owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), initCodeHash)))));
    }
}

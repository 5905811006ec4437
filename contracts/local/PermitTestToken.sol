// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import "@openzeppelin/contracts/interfaces/IERC1271.sol";
import "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

/**
 * A fee token for the embedded local chain and the tests that behaves as USDC (FiatToken v2.2) does where a paymaster
 * cares, so that the permit path can be tried without a fork of a real network:
 * - 6 decimals, and `mint(address,uint256)` open to anyone, as TestToken (local chains only: no value);
 * - an EIP-2612 permit, in USDC's two forms: (v, r, s) and a `bytes signature`;
 * - the deadline is compared with the clock only when it can pass: a permit with `type(uint256).max` never reads
 *   TIMESTAMP, so a paymaster may run it during validation, where ERC-7562 bans that opcode. OpenZeppelin's
 *   ERC20Permit always reads it, which is why this token does not use it;
 * - an owner with code (a smart account, or an EOA delegated with EIP-7702) is asked through ERC-1271's
 *   isValidSignature, any other owner by ECDSA recovery;
 * - its EIP-712 domain is published through EIP-5267's eip712Domain() (OpenZeppelin's EIP712), besides name(),
 *   version() and DOMAIN_SEPARATOR(), so clients read it from the chain rather than assume it.
 * Never deploy it where its tokens could be mistaken for value.
 */
contract PermitTestToken is ERC20, EIP712 {
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");

    /// One sequence per owner, as EIP-2612 and USDC have: a permit is valid only with the owner's next nonce.
    mapping(address => uint256) private permitNonces;
    /// The EIP-712 version again (OpenZeppelin 4's EIP712 keeps its own copy private); read only by version().
    string private domainVersion;

    constructor(string memory name_, string memory symbol_, string memory version_)
        ERC20(name_, symbol_)
        EIP712(name_, version_)
    {
        domainVersion = version_;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// Open to anyone: this token is for local chains only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function nonces(address owner) external view returns (uint256) {
        return permitNonces[owner];
    }

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// The EIP-712 version, as USDC answers it.
    function version() external view returns (string memory) {
        return domainVersion;
    }

    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        _permit(owner, spender, value, deadline, abi.encodePacked(r, s, v));
    }

    /// USDC v2.2's form: any length, so that a smart account's ERC-1271 signature fits.
    function permit(address owner, address spender, uint256 value, uint256 deadline, bytes calldata signature)
        external
    {
        _permit(owner, spender, value, deadline, signature);
    }

    function _permit(address owner, address spender, uint256 value, uint256 deadline, bytes memory signature)
        private
    {
        // Short-circuits before TIMESTAMP for the maximum deadline (see the contract's comment).
        require(deadline == type(uint256).max || deadline >= block.timestamp, "PermitTestToken: permit expired");
        bytes32 structHash =
            keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, permitNonces[owner]++, deadline));
        require(
            _signedBy(owner, _hashTypedDataV4(structHash), signature), "PermitTestToken: invalid permit signature"
        );
        _approve(owner, spender, value);
    }

    /// USDC's rule: code at the owner means ERC-1271, none means ECDSA.
    function _signedBy(address owner, bytes32 digest, bytes memory signature) private view returns (bool) {
        if (owner.code.length == 0) {
            (address recovered, ECDSA.RecoverError error) = ECDSA.tryRecover(digest, signature);
            return error == ECDSA.RecoverError.NoError && recovered == owner;
        }
        (bool ok, bytes memory answer) =
            owner.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
        return ok && answer.length == 32 && abi.decode(answer, (bytes4)) == IERC1271.isValidSignature.selector;
    }
}

// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@account-abstraction/contracts-v0.7/core/Helpers.sol";
import "@account-abstraction/contracts-v0.7/core/UserOperationLib.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IPaymaster.sol";
import "../SignerSet.sol";
import "./PaymasterSignatureV09.sol";

/**
 * A verifying paymaster shared by many dApps, for EntryPoint v0.9. The EntryPoint takes the same PackedUserOperation
 * and calls the same IPaymaster hooks as v0.7 (whose interfaces this compiles against); what v0.9 adds is a paymaster
 * signature outside paymasterData, which this contract reads (PaymasterSignatureV09.sol).
 *
 * Each dApp funds a balance keyed by its `paymasterId` (its funding wallet); postOp charges the operation's cost to it,
 * exactly as VerifyingPaymasterV07 does (docs/contracts.md).
 *
 * paymasterAndData = paymaster (20) ++ paymasterVerificationGasLimit (16) ++ paymasterPostOpGasLimit (16)
 *                    ++ abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
 *                    [++ paymasterSignature ++ uint16(len) ++ PAYMASTER_SIG_MAGIC]
 *
 * Two ways to sign, told apart by the magic at the end:
 * - parallel: the suffix is present; it holds a signature over the EntryPoint's userOpHash, which v0.9 computes without
 *   the suffix's signature, so the wallet and the service sign at the same time. `signature` inside paymasterData is
 *   then empty. userOpHash binds every field of the operation, the terms in paymasterData, the chain and the EntryPoint.
 * - sequential: no suffix; `signature` is over getHash (the v0.7/v0.8 scheme), for clients that cannot send a
 *   paymasterSignature (viem's ERC-7677 client drops it).
 *
 * validUntil/validAfter are unix seconds, or block numbers when both have bit 47 set (EntryPoint v0.9 reads them so).
 * No signer in the constructor: the owner adds the service's key afterwards (SignerSet), so the address depends only on
 * the code, the EntryPoint and the owner.
 */
contract VerifyingPaymasterV09 is IPaymaster, SignerSet {
    using UserOperationLib for PackedUserOperation;

    /// As VerifyingPaymasterV07: the postOp call and the EntryPoint's accounting after it, with a margin.
    uint256 public constant POST_OP_OVERHEAD_GAS = 12_000;

    /// The EntryPoint's penalty on unused execution gas (callGasLimit + paymasterPostOpGasLimit), in percent.
    uint256 public constant UNUSED_GAS_PENALTY_PERCENT = 10;

    uint256 private constant SIGNATURE_LENGTH = 65;

    IEntryPoint public immutable entryPoint;
    mapping(address => uint256) private balances;

    event GasDeposited(address indexed paymasterId, address indexed from, uint256 amount);
    event GasWithdrawn(address indexed paymasterId, address indexed to, uint256 amount);
    event GasCharged(address indexed paymasterId, bytes32 indexed userOpHash, uint256 charge);

    /// What validation hands to postOp: who pays, what was reserved, and the bounds of the penalty estimate.
    struct ChargeContext {
        address paymasterId;
        bytes32 userOpHash;
        uint256 reserved;
        uint256 preExecutionGasLimit;
        uint256 executionGasLimit;
    }

    /// @param owner_ set explicitly because under a CREATE2 deployer msg.sender is the deployer, not the owner.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "VerifyingPaymasterV09: entryPoint is zero");
        require(owner_ != address(0), "VerifyingPaymasterV09: owner is zero");
        entryPoint = entryPoint_;
        _transferOwnership(owner_);
    }

    // ---- dApp deposits ----

    function depositFor(address paymasterId) external payable {
        require(paymasterId != address(0), "VerifyingPaymasterV09: paymasterId is zero");
        require(msg.value > 0, "VerifyingPaymasterV09: nothing to deposit");
        balances[paymasterId] += msg.value;
        entryPoint.depositTo{value: msg.value}(address(this));
        emit GasDeposited(paymasterId, msg.sender, msg.value);
    }

    /// The caller is the paymasterId: a funding wallet can only move its own balance.
    function withdrawTo(address payable target, uint256 amount) external {
        require(target != address(0), "VerifyingPaymasterV09: target is zero");
        uint256 balance = balances[msg.sender];
        require(amount <= balance, "VerifyingPaymasterV09: amount exceeds balance");
        balances[msg.sender] = balance - amount; // before the external call: a re-entering target sees the new balance
        emit GasWithdrawn(msg.sender, target, amount);
        entryPoint.withdrawTo(target, amount);
    }

    function getBalance(address paymasterId) external view returns (uint256) {
        return balances[paymasterId];
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    // ---- signing ----

    /**
     * The sequential signature's hash, byte for byte VerifyingPaymasterV07's: every field but the two signatures, the
     * paymaster's two gas limits, the chain id, this address and the terms. Never covers a paymasterSignature suffix.
     */
    function getHash(PackedUserOperation calldata userOp, address paymasterId, uint48 validUntil, uint48 validAfter)
        public
        view
        returns (bytes32)
    {
        return keccak256(
            bytes.concat(
                abi.encode(
                    userOp.sender,
                    userOp.nonce,
                    calldataKeccak(userOp.initCode),
                    calldataKeccak(userOp.callData),
                    userOp.accountGasLimits,
                    userOp.preVerificationGas,
                    userOp.gasFees
                ),
                abi.encode(
                    userOp.unpackPaymasterVerificationGasLimit(),
                    userOp.unpackPostOpGasLimit(),
                    block.chainid,
                    address(this),
                    paymasterId,
                    validUntil,
                    validAfter
                )
            )
        );
    }

    /// Our terms and the in-data signature, after the 52 fixed bytes and before any paymasterSignature suffix.
    function parsePaymasterAndData(bytes calldata paymasterAndData)
        public
        pure
        returns (address paymasterId, uint48 validUntil, uint48 validAfter, bytes memory signature)
    {
        (bytes calldata data,) = PaymasterSignatureV09.split(paymasterAndData);
        return abi.decode(data, (address, uint48, uint48, bytes));
    }

    // ---- EntryPoint hooks ----

    /**
     * A bad signature is SIG_VALIDATION_FAILED rather than a revert, as ERC-4337 asks; a signature that can never be
     * valid (wrong length, or one in each place) reverts as malformed input. maxCost is reserved from the dApp's balance
     * here and the unused part given back in postOp, as in VerifyingPaymasterV07.
     */
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (address paymasterId, uint48 validUntil, uint48 validAfter, bool signed) = _verify(userOp, userOpHash);
        if (!signed) return ("", _packValidationData(true, validUntil, validAfter));

        uint256 balance = balances[paymasterId];
        require(balance >= maxCost, "VerifyingPaymasterV09: paymasterId deposit too low");
        balances[paymasterId] = balance - maxCost;
        return (_chargeContext(userOp, userOpHash, paymasterId, maxCost), _packValidationData(false, validUntil, validAfter));
    }

    /// The terms, and whether a key of the set signed them: in the suffix over userOpHash, or in paymasterData over getHash.
    function _verify(PackedUserOperation calldata userOp, bytes32 userOpHash)
        private
        view
        returns (address paymasterId, uint48 validUntil, uint48 validAfter, bool signed)
    {
        (bytes calldata data, bytes calldata suffixSignature) = PaymasterSignatureV09.split(userOp.paymasterAndData);
        bytes memory dataSignature;
        (paymasterId, validUntil, validAfter, dataSignature) = abi.decode(data, (address, uint48, uint48, bytes));
        if (PaymasterSignatureV09.hasSuffix(userOp.paymasterAndData)) {
            require(dataSignature.length == 0, "VerifyingPaymasterV09: signature in both places");
            require(suffixSignature.length == SIGNATURE_LENGTH, "VerifyingPaymasterV09: signature must be 65 bytes");
            signed = _signedByASigner(userOpHash, suffixSignature);
        } else {
            require(dataSignature.length == SIGNATURE_LENGTH, "VerifyingPaymasterV09: signature must be 65 bytes");
            signed = _signedByASigner(getHash(userOp, paymasterId, validUntil, validAfter), dataSignature);
        }
    }

    function _chargeContext(PackedUserOperation calldata userOp, bytes32 userOpHash, address paymasterId, uint256 maxCost)
        private
        pure
        returns (bytes memory)
    {
        return abi.encode(
            ChargeContext({
                paymasterId: paymasterId,
                userOpHash: userOpHash,
                reserved: maxCost,
                preExecutionGasLimit: userOp.preVerificationGas + userOp.unpackVerificationGasLimit()
                    + userOp.unpackPaymasterVerificationGasLimit(),
                executionGasLimit: userOp.unpackCallGasLimit() + userOp.unpackPostOpGasLimit()
            })
        );
    }

    /// As VerifyingPaymasterV07.postOp: the cost bounded from above in every mode, the rest of the reservation back.
    /// It must never revert (a revert makes the EntryPoint charge the whole prefund and keep the reservation taken).
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        external
        override
    {
        _requireFromEntryPoint();
        (mode);
        ChargeContext memory charge = abi.decode(context, (ChargeContext));
        uint256 cost = actualGasCost
            + (POST_OP_OVERHEAD_GAS + _unusedGasPenaltyBound(charge, actualGasCost, actualUserOpFeePerGas))
                * actualUserOpFeePerGas;
        if (cost > charge.reserved) cost = charge.reserved;
        balances[charge.paymasterId] += charge.reserved - cost;
        emit GasCharged(charge.paymasterId, charge.userOpHash, cost);
    }

    function _unusedGasPenaltyBound(ChargeContext memory charge, uint256 actualGasCost, uint256 feePerGas)
        private
        pure
        returns (uint256)
    {
        if (feePerGas == 0) return 0;
        uint256 gasSoFar = actualGasCost / feePerGas;
        uint256 executionGasUsed = gasSoFar > charge.preExecutionGasLimit ? gasSoFar - charge.preExecutionGasLimit : 0;
        if (executionGasUsed >= charge.executionGasLimit) return 0;
        return (charge.executionGasLimit - executionGasUsed) * UNUSED_GAS_PENALTY_PERCENT / 100;
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "VerifyingPaymasterV09: sender not EntryPoint");
    }

    // ---- owner: staking ----

    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable target) external onlyOwner {
        entryPoint.withdrawStake(target);
    }

    /// Without an owner no signer could be added or removed after a key leak.
    function renounceOwnership() public view override onlyOwner {
        revert("VerifyingPaymasterV09: ownership cannot be renounced");
    }
}

// SPDX-License-Identifier: MIT
pragma solidity ^0.8.12;

import "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import "@openzeppelin/contracts/utils/math/Math.sol";
import "@account-abstraction/contracts/core/Helpers.sol";
import "@account-abstraction/contracts/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts/interfaces/IPaymaster.sol";
import "./SignerSet.sol";

/// The two reads of a Chainlink AggregatorV3Interface this paymaster makes.
interface IPriceAggregator {
    function decimals() external view returns (uint8);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/**
 * A token paymaster (EntryPoint v0.6): the user operation's gas is paid from this contract's EntryPoint deposit, which
 * its owner funds, and the sender pays this contract back in an ERC20 fee token, at an exchange rate the service signs
 * or an oracle gives, plus a signed markup.
 *
 * paymasterAndData (278 bytes; docs/contracts.md, 'Token paymasterAndData layout (278 bytes)'):
 *   [0:20]    this contract's address
 *   [20]      priceSource: 0 = the signed exchangeRate, 1 = the oracle aggregator's price
 *   [21:213]  abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
 *                        uint256 exchangeRate, uint32 priceMarkup)
 *   [213:278] a signer's signature (any key of the set), 65 raw bytes r,s,v
 * exchangeRate is in fee-token base units per 1e18 wei; priceMarkup in millionths, 1e6 (none) to 2e6 (double).
 *
 * Validation checks the signature, the markup and the price, and that the sender holds (and, by default, has approved
 * to this contract) the most the operation can cost in tokens: maxCost plus POST_OP_OVERHEAD_GAS at maxFeePerGas,
 * converted at the rate with the markup. postOp charges the actual cost plus the overhead at the operation's gas price,
 * converted the same way and never above that maximum, with transferFrom(sender -> this contract).
 *
 * Who pays when the charge fails: the owner. The EntryPoint has taken the prefund from this contract's deposit before
 * postOp runs and keeps the operation's actual gas cost whatever postOp does. If the pull fails after the user's call succeeded, postOp reverts once, so the
 * EntryPoint undoes the call (which may be what moved the tokens or revoked the allowance) and calls postOp again in
 * postOpReverted mode, where the pull is retried against the state validation checked. If that fails too (or the call
 * itself had reverted), postOp records TokenChargeFailed and returns: it never reverts a second time, since that would
 * fail the whole bundle (AA50) at the bundler's cost. The deposit has then paid one operation's gas, at most its
 * maxCost, which the gas limits and fees the service signed fix, and the event tells the service whose operations to
 * stop signing.
 *
 * Why IPaymaster and not BasePaymaster (as VerifyingPaymaster): one pattern for both paymasters, with the owner-only
 * deposit and stake functions written out here.
 *
 * The service's signatures are accepted from any key of the owner's SignerSet, so a key rotation invalidates no
 * signature in flight, and the constructor takes no key, so the CREATE2 address depends only on the code, the
 * EntryPoint and the owner.
 */
contract TokenPaymaster is IPaymaster, SignerSet {
    using SafeERC20 for IERC20;

    /// The signed terms of paymasterAndData, besides the signature.
    struct FeeTerms {
        uint8 priceSource;
        uint48 validUntil;
        uint48 validAfter;
        address feeToken;
        address oracleAggregator;
        uint256 exchangeRate;
        uint32 priceMarkup;
    }

    /// What validation hands to postOp.
    struct ChargeContext {
        address sender;
        address feeToken;
        /// The rate the charge uses: the signed one, or the oracle's as read during validation.
        uint256 exchangeRate;
        uint32 priceMarkup;
        /// The most postOp may take: what validation found the sender to hold (and have approved).
        uint256 maxTokenCost;
        uint256 maxFeePerGas;
        uint256 maxPriorityFeePerGas;
        bytes32 userOpHash;
    }

    uint8 public constant PRICE_SOURCE_EXCHANGE_RATE = 0;
    uint8 public constant PRICE_SOURCE_ORACLE = 1;
    /// priceMarkup is in millionths: 1e6 charges the cost as is, 2e6 twice the cost.
    uint32 public constant MIN_PRICE_MARKUP = 1e6;
    uint32 public constant MAX_PRICE_MARKUP = 2e6;

    /**
     * Gas the EntryPoint charges this paymaster that postOp's `actualGasCost` does not include yet: postOp itself (the
     * context decoding, the token's transferFrom, the event) and the EntryPoint's accounting after it. Measured on
     * anvil with OpenZeppelin's ERC20 and a finite allowance (test/contracts/tokenPaymaster.test.ts): 21,147 gas, the
     * token slots being warm from validation. 30,000 leaves room for heavier tokens (proxies, blocklists). The first
     * charge of a token, while this contract holds none of it, also writes its balance from zero (38,247 in all): those
     * 20,000 gas are not charged to every user for a one-time cost; the owner bears them once per token (and again if
     * it withdraws the whole balance).
     */
    uint256 public constant POST_OP_OVERHEAD_GAS = 30_000;

    uint256 private constant TERMS_OFFSET = 21;
    uint256 private constant SIGNATURE_OFFSET = 213;
    uint256 private constant SIGNATURE_LENGTH = 65;
    /// 1e18 wei per exchangeRate unit times 1e6 markup millionths.
    uint256 private constant RATE_AND_MARKUP_DENOMINATOR = 1e24;
    /// Gas kept back from the token call, so that a token exhausting what it is given still leaves enough to record it.
    uint256 private constant TOKEN_CALL_GAS_RESERVE = 10_000;

    IEntryPoint public immutable entryPoint;
    /// An oracle price older than this (seconds) is refused: the operation's validUntil is cut to
    /// updatedAt + maxPriceAge.
    uint48 public maxPriceAge;
    /**
     * Whether validation requires the allowance to this contract to cover the maximum token cost already. True: the
     * charge cannot be dodged (see the contract comment). False: an operation may approve this contract in its own
     * batch, as the public service's SDK does, and the owner accepts to pay for such operations whose call reverts
     * (undoing the approval) or whose sender never approves.
     */
    bool public allowanceRequired;

    event TokenCharged(
        address indexed sender,
        address indexed feeToken,
        bytes32 indexed userOpHash,
        uint256 amount,
        uint256 gasCost,
        uint256 exchangeRate,
        uint32 priceMarkup
    );
    /// A charge that could not be taken: `amount` tokens are owed; `gasCost` (wei) is what postOp meant to charge for.
    event TokenChargeFailed(
        address indexed sender, address indexed feeToken, bytes32 indexed userOpHash, uint256 amount, uint256 gasCost
    );
    event MaxPriceAgeChanged(uint48 previousMaxPriceAge, uint48 newMaxPriceAge);
    event AllowanceRequiredChanged(bool required);
    event TokensWithdrawn(address indexed token, address indexed to, uint256 amount);

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "TokenPaymaster: entryPoint is zero");
        require(owner_ != address(0), "TokenPaymaster: owner is zero");
        entryPoint = entryPoint_;
        // Chainlink's slowest common heartbeat; the owner tightens it per deployment.
        maxPriceAge = 1 days;
        allowanceRequired = true;
        _transferOwnership(owner_);
    }

    // ---- what the service and the tests compute the same way ----

    /// What a signer of the set signs (EIP-191 personal_sign over these 32 bytes).
    function getHash(UserOperation calldata userOp, FeeTerms memory terms) public view returns (bytes32) {
        // Three abi.encode of static values concatenated are byte-identical to one abi.encode of all eighteen; the
        // split only keeps the compiler under its stack limit.
        return keccak256(
            bytes.concat(
                abi.encode(
                    userOp.sender,
                    userOp.nonce,
                    calldataKeccak(userOp.initCode),
                    calldataKeccak(userOp.callData),
                    userOp.callGasLimit,
                    userOp.verificationGasLimit,
                    userOp.preVerificationGas
                ),
                abi.encode(
                    userOp.maxFeePerGas,
                    userOp.maxPriorityFeePerGas,
                    block.chainid,
                    address(this),
                    terms.priceSource,
                    terms.validUntil
                ),
                abi.encode(
                    terms.validAfter, terms.feeToken, terms.oracleAggregator, terms.exchangeRate, terms.priceMarkup
                )
            )
        );
    }

    function parsePaymasterAndData(bytes calldata paymasterAndData)
        external
        pure
        returns (FeeTerms memory terms, bytes memory signature)
    {
        return _parse(paymasterAndData);
    }

    /// Token base units for `weiAmount` at `exchangeRate` (per 1e18 wei) with `priceMarkup` (millionths), rounded up.
    function tokenAmount(uint256 weiAmount, uint256 exchangeRate, uint32 priceMarkup) public pure returns (uint256) {
        return Math.mulDiv(weiAmount, exchangeRate * priceMarkup, RATE_AND_MARKUP_DENOMINATOR, Math.Rounding.Up);
    }

    /**
     * The exchange rate an aggregator gives for `feeToken`: its answer is whole fee tokens per whole native token, with
     * the aggregator's decimals. Reverts on a non-positive price or a round that never completed; staleness is the
     * caller's to judge from `updatedAt` (validation cannot read the clock, see _rateAndExpiry).
     */
    function oracleRate(address feeToken, address aggregator) public view returns (uint256 rate, uint256 updatedAt) {
        require(aggregator != address(0), "TokenPaymaster: oracle aggregator is zero");
        int256 answer;
        (, answer,, updatedAt,) = IPriceAggregator(aggregator).latestRoundData();
        require(answer > 0, "TokenPaymaster: oracle price is zero or negative");
        require(updatedAt > 0, "TokenPaymaster: oracle round not complete");
        rate = Math.mulDiv(
            uint256(answer), 10 ** IERC20Metadata(feeToken).decimals(), 10 ** IPriceAggregator(aggregator).decimals()
        );
        require(rate > 0, "TokenPaymaster: oracle price rounds to a zero exchange rate");
    }

    // ---- EntryPoint hooks ----

    /**
     * A signature by another key is reported as SIG_VALIDATION_FAILED (AA34), as ERC-4337 asks, and the other checks
     * still run, so a stub signature exercises the whole validation and postOp when a bundler estimates gas. A
     * signature of the wrong length, a markup outside 1e6..2e6, a bad price, or too few tokens revert with a reason
     * (AA33).
     *
     * Nothing here reads the clock (ERC-7562 bans TIMESTAMP in validation): a stale oracle price shortens the validity
     * window instead, so the EntryPoint refuses the operation (AA32) once updatedAt + maxPriceAge has passed.
     */
    function validatePaymasterUserOp(UserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        view
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (FeeTerms memory terms, bytes calldata signature) = _parse(userOp.paymasterAndData);
        require(signature.length == SIGNATURE_LENGTH, "TokenPaymaster: signature must be 65 bytes (r,s,v)");
        bool sigFailed = !_signedByASigner(getHash(userOp, terms), signature);

        require(
            terms.priceMarkup >= MIN_PRICE_MARKUP && terms.priceMarkup <= MAX_PRICE_MARKUP,
            "TokenPaymaster: priceMarkup must be 1e6 to 2e6 (millionths)"
        );
        require(terms.feeToken != address(0), "TokenPaymaster: fee token is zero");
        (uint256 rate, uint48 validUntil) = _rateAndExpiry(terms);

        uint256 maxTokenCost =
            tokenAmount(maxCost + POST_OP_OVERHEAD_GAS * userOp.maxFeePerGas, rate, terms.priceMarkup);
        _requireTokens(IERC20(terms.feeToken), userOp.sender, maxTokenCost);

        context = abi.encode(
            ChargeContext({
                sender: userOp.sender,
                feeToken: terms.feeToken,
                exchangeRate: rate,
                priceMarkup: terms.priceMarkup,
                maxTokenCost: maxTokenCost,
                maxFeePerGas: userOp.maxFeePerGas,
                maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
                userOpHash: userOpHash
            })
        );
        return (context, _packValidationData(sigFailed, validUntil, terms.validAfter));
    }

    /**
     * Charges actualGasCost + POST_OP_OVERHEAD_GAS * gas price, in tokens, in every mode (the EntryPoint takes the
     * gas from the deposit in every mode too). A failed pull reverts only in opSucceeded mode, which makes the
     * EntryPoint undo the user's call and call again in postOpReverted mode; in opReverted and postOpReverted mode it
     * is recorded as TokenChargeFailed instead, since nothing the operation did is left to undo and a revert there
     * fails the bundle.
     */
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost) external override {
        _requireFromEntryPoint();
        ChargeContext memory charge = abi.decode(context, (ChargeContext));
        uint256 gasCost =
            actualGasCost + POST_OP_OVERHEAD_GAS * _gasPrice(charge.maxFeePerGas, charge.maxPriorityFeePerGas);
        uint256 amount = tokenAmount(gasCost, charge.exchangeRate, charge.priceMarkup);
        // Only binds if the EntryPoint's accounting exceeded its own prefund, when it reverts anyway (AA51).
        if (amount > charge.maxTokenCost) amount = charge.maxTokenCost;

        if (_tryTransferFrom(charge.feeToken, charge.sender, amount)) {
            emit TokenCharged(
                charge.sender,
                charge.feeToken,
                charge.userOpHash,
                amount,
                gasCost,
                charge.exchangeRate,
                charge.priceMarkup
            );
            return;
        }
        require(mode != PostOpMode.opSucceeded, "TokenPaymaster: token charge failed, retrying without the call");
        emit TokenChargeFailed(charge.sender, charge.feeToken, charge.userOpHash, amount, gasCost);
    }

    // ---- owner (signers: SignerSet): oracle age, allowance rule, tokens, deposit and stake ----

    function setMaxPriceAge(uint48 newMaxPriceAge) external onlyOwner {
        require(newMaxPriceAge > 0, "TokenPaymaster: maxPriceAge is zero");
        emit MaxPriceAgeChanged(maxPriceAge, newMaxPriceAge);
        maxPriceAge = newMaxPriceAge;
    }

    function setAllowanceRequired(bool required) external onlyOwner {
        allowanceRequired = required;
        emit AllowanceRequiredChanged(required);
    }

    /// The collected fees (and anything sent here by mistake).
    function withdrawToken(IERC20 token, address to, uint256 amount) external onlyOwner {
        require(to != address(0), "TokenPaymaster: target is zero");
        token.safeTransfer(to, amount);
        emit TokensWithdrawn(address(token), to, amount);
    }

    /// Adds to this paymaster's EntryPoint deposit, which pays every operation's gas. Anyone may add; only the owner
    /// withdraws.
    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function withdrawTo(address payable target, uint256 amount) external onlyOwner {
        require(target != address(0), "TokenPaymaster: target is zero");
        entryPoint.withdrawTo(target, amount);
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    /// ERC-7562 lets only a staked paymaster read the fee token's and the aggregator's storage during validation.
    function addStake(uint32 unstakeDelaySec) external payable onlyOwner {
        entryPoint.addStake{value: msg.value}(unstakeDelaySec);
    }

    function unlockStake() external onlyOwner {
        entryPoint.unlockStake();
    }

    function withdrawStake(address payable target) external onlyOwner {
        entryPoint.withdrawStake(target);
    }

    /// Without an owner the signer set could never change after a key leak, nor the deposit and fees recovered.
    function renounceOwnership() public view override onlyOwner {
        revert("TokenPaymaster: ownership cannot be renounced");
    }

    // ---- internals ----

    function _parse(bytes calldata paymasterAndData)
        private
        pure
        returns (FeeTerms memory terms, bytes calldata signature)
    {
        require(paymasterAndData.length >= SIGNATURE_OFFSET, "TokenPaymaster: paymasterAndData shorter than 213 bytes");
        terms.priceSource = uint8(paymasterAndData[TERMS_OFFSET - 1]);
        (
            terms.validUntil,
            terms.validAfter,
            terms.feeToken,
            terms.oracleAggregator,
            terms.exchangeRate,
            terms.priceMarkup
        ) = abi.decode(
            paymasterAndData[TERMS_OFFSET:SIGNATURE_OFFSET], (uint48, uint48, address, address, uint256, uint32)
        );
        signature = paymasterAndData[SIGNATURE_OFFSET:];
    }

    /// The rate the charge will use, and the validity end: the signed one, cut to the oracle price's expiry if earlier.
    function _rateAndExpiry(FeeTerms memory terms) private view returns (uint256 rate, uint48 validUntil) {
        if (terms.priceSource == PRICE_SOURCE_EXCHANGE_RATE) {
            require(terms.exchangeRate > 0, "TokenPaymaster: exchange rate is zero");
            return (terms.exchangeRate, terms.validUntil);
        }
        require(
            terms.priceSource == PRICE_SOURCE_ORACLE,
            "TokenPaymaster: priceSource must be 0 (signed rate) or 1 (oracle)"
        );
        uint256 updatedAt;
        (rate, updatedAt) = oracleRate(terms.feeToken, terms.oracleAggregator);
        uint256 priceUntil = updatedAt + maxPriceAge;
        if (priceUntil > type(uint48).max) priceUntil = type(uint48).max;
        // validUntil 0 means no end (EntryPoint semantics), so the price's end always applies then.
        validUntil = terms.validUntil == 0 || priceUntil < terms.validUntil ? uint48(priceUntil) : terms.validUntil;
    }

    function _requireTokens(IERC20 token, address sender, uint256 maxTokenCost) private view {
        require(token.balanceOf(sender) >= maxTokenCost, "TokenPaymaster: fee token balance below the maximum charge");
        if (allowanceRequired) {
            require(
                token.allowance(sender, address(this)) >= maxTokenCost,
                "TokenPaymaster: fee token allowance below the maximum charge"
            );
        }
    }

    /**
     * transferFrom(from -> this) that reports failure instead of reverting: a revert, a false result, or no code at the
     * token all count as failure; no return data counts as success (tokens such as USDT return nothing). Only the first
     * word of the return data is copied, so a token returning a huge blob cannot exhaust postOp's memory.
     */
    function _tryTransferFrom(address token, address from, uint256 amount) private returns (bool ok) {
        bytes memory data = abi.encodeCall(IERC20.transferFrom, (from, address(this), amount));
        uint256 reserve = TOKEN_CALL_GAS_RESERVE;
        assembly {
            let available := gas()
            if gt(available, reserve) {
                mstore(0x00, 0)
                let success := call(sub(available, reserve), token, 0, add(data, 0x20), mload(data), 0x00, 0x20)
                let returned := returndatasize()
                ok :=
                    and(
                        success,
                        or(and(iszero(returned), gt(extcodesize(token), 0)), and(gt(returned, 31), eq(mload(0x00), 1)))
                    )
            }
        }
    }

    /**
     * The EntryPoint's own rule (UserOperationLib.gasPrice), so the overhead is priced as the EntryPoint prices gas. A
     * tip at or above maxFeePerGas gives maxFeePerGas either way; returning early there keeps the addition below from
     * overflowing, since postOp must not revert on any operation that validated.
     */
    function _gasPrice(uint256 maxFeePerGas, uint256 maxPriorityFeePerGas) private view returns (uint256) {
        if (maxPriorityFeePerGas >= maxFeePerGas) return maxFeePerGas; // also legacy chains without BASEFEE
        uint256 price = maxPriorityFeePerGas + block.basefee;
        return price < maxFeePerGas ? price : maxFeePerGas;
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "TokenPaymaster: sender not EntryPoint");
    }
}

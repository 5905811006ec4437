// SPDX-License-Identifier: MIT
pragma solidity ^0.8.23;

import "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import "@openzeppelin/contracts/utils/math/Math.sol";
import "@account-abstraction/contracts-v0.7/core/Helpers.sol";
import "@account-abstraction/contracts-v0.7/core/UserOperationLib.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IEntryPoint.sol";
import "@account-abstraction/contracts-v0.7/interfaces/IPaymaster.sol";
import "../SignerSet.sol";

/// The two reads of a Chainlink AggregatorV3Interface this paymaster makes (the v0.6 TokenPaymaster's interface).
interface IPriceAggregatorV07 {
    function decimals() external view returns (uint8);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/**
 * A token paymaster for EntryPoint v0.7 and v0.8 (both take the v0.7 PackedUserOperation and call the same hooks; the
 * EntryPoint is a constructor argument, one deployment per EntryPoint). The operation's gas is paid from this
 * contract's own EntryPoint deposit, which its owner funds, and the sender pays it back in an ERC20 fee token at an
 * exchange rate the service signs or an oracle gives, plus a signed markup: the v0.6 TokenPaymaster's terms and money
 * model on the packed operation (docs/contracts.md, 'TokenPaymasterV07 (EntryPoint v0.7 and v0.8)').
 *
 * paymasterAndData (310 bytes):
 *   [0:20]    this contract's address                         \
 *   [20:36]   paymasterVerificationGasLimit (uint128)           } read by the EntryPoint
 *   [36:52]   paymasterPostOpGasLimit (uint128)                /
 *   [52]      priceSource: 0 = the signed exchangeRate, 1 = the oracle aggregator's price
 *   [53:245]  abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
 *                        uint256 exchangeRate, uint32 priceMarkup)
 *   [245:310] a signer's signature (any key of the set), 65 raw bytes r,s,v
 * Everything after byte 52 is the v0.6 TokenPaymaster's data unchanged.
 *
 * Charging: the account usually approves this contract in its own batch, so no allowance exists at validation time.
 * Validation therefore checks the signature, the terms and the sender's token balance (its associated storage, which
 * ERC-7562 lets a staked paymaster read) against the most the operation can cost in tokens, and postOp pulls the
 * actual cost with transferFrom. EntryPoint v0.7 and v0.8 have no postOpReverted retry: if the pull fails (the
 * execution spent the tokens or the allowance, or a reverted call undid its own approve), postOp reverts, the
 * EntryPoint reverts the execution, emits PostOpRevertReason and charges this contract's deposit. The owner bears that
 * loss, at most the operation's signed prefund (docs/contracts.md, 'When the token charge fails', says how the
 * service keeps it rare).
 *
 * Why IPaymaster and not BasePaymaster: as the v0.6 TokenPaymaster, with the owner-only deposit and stake functions
 * written out here.
 *
 * The service's signatures are accepted from any key of the owner's SignerSet, so a key rotation invalidates no
 * signature in flight, and the constructor takes no key, so the CREATE2 address depends only on the code, the
 * EntryPoint and the owner.
 */
contract TokenPaymasterV07 is IPaymaster, SignerSet {
    using SafeERC20 for IERC20;
    using UserOperationLib for PackedUserOperation;

    /// The signed terms of paymasterAndData, besides the signature (the v0.6 TokenPaymaster's FeeTerms).
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
        /// The most postOp may take: the EntryPoint's prefund in tokens, which validation found the sender to hold.
        uint256 maxTokenCost;
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
     * anvil with OpenZeppelin's ERC20 (test/contracts/v07/tokenPaymasterV07.test.ts): 18,565 gas on EntryPoint 0.8.0,
     * the same work on 0.7.0; 30,000 leaves room for heavier tokens (proxies, blocklists), as the v0.6 contract does.
     * The first charge of a token, while this contract holds none of it, also writes its balance from zero (35,665 in
     * all): the owner bears those 17,100 gas once per token. EntryPoint v0.7 also adds 10% of the unused call and postOp
     * gas after postOp, which postOp cannot see; the margin and the markup cover it (docs/contracts.md, 'What the
     * sender is charged').
     */
    uint256 public constant POST_OP_OVERHEAD_GAS = 30_000;

    uint256 private constant PRICE_SOURCE_OFFSET = UserOperationLib.PAYMASTER_DATA_OFFSET; // 52
    uint256 private constant TERMS_OFFSET = PRICE_SOURCE_OFFSET + 1; // 53
    uint256 private constant SIGNATURE_OFFSET = TERMS_OFFSET + 6 * 32; // 245
    uint256 private constant SIGNATURE_LENGTH = 65;
    /// 1e18 wei per exchangeRate unit times 1e6 markup millionths.
    uint256 private constant RATE_AND_MARKUP_DENOMINATOR = 1e24;

    IEntryPoint public immutable entryPoint;
    /// An oracle price older than this (seconds) is refused: the operation's validUntil is cut to
    /// updatedAt + maxPriceAge.
    uint48 public maxPriceAge;

    event TokenCharged(
        address indexed sender,
        address indexed feeToken,
        bytes32 indexed userOpHash,
        uint256 amount,
        uint256 gasCost,
        uint256 exchangeRate,
        uint32 priceMarkup
    );
    event MaxPriceAgeChanged(uint48 previousMaxPriceAge, uint48 newMaxPriceAge);
    event TokensWithdrawn(address indexed token, address indexed to, uint256 amount);

    /// @param owner_ set explicitly because under a CREATE2 factory msg.sender is the factory, not the deployer.
    constructor(IEntryPoint entryPoint_, address owner_) {
        require(address(entryPoint_) != address(0), "TokenPaymasterV07: entryPoint is zero");
        require(owner_ != address(0), "TokenPaymasterV07: owner is zero");
        entryPoint = entryPoint_;
        // Chainlink's slowest common heartbeat; the owner tightens it per deployment.
        maxPriceAge = 1 days;
        _transferOwnership(owner_);
    }

    // ---- what the service and the tests compute the same way ----

    /**
     * What a signer of the set signs (EIP-191 personal_sign over these 32 bytes): every field of the packed operation
     * except the two that carry signatures, the two paymaster gas limits from paymasterAndData (which must therefore be
     * at least 52 bytes long), the chain id, this address, and the fee terms.
     */
    function getHash(PackedUserOperation calldata userOp, FeeTerms memory terms) public view returns (bytes32) {
        // Three abi.encode of static values concatenated are byte-identical to one abi.encode of all eighteen; the
        // split only keeps the compiler under its stack limit.
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
        require(aggregator != address(0), "TokenPaymasterV07: oracle aggregator is zero");
        int256 answer;
        (, answer,, updatedAt,) = IPriceAggregatorV07(aggregator).latestRoundData();
        require(answer > 0, "TokenPaymasterV07: oracle price is zero or negative");
        require(updatedAt > 0, "TokenPaymasterV07: oracle round not complete");
        rate = Math.mulDiv(
            uint256(answer),
            10 ** IERC20Metadata(feeToken).decimals(),
            10 ** IPriceAggregatorV07(aggregator).decimals()
        );
        require(rate > 0, "TokenPaymasterV07: oracle price rounds to a zero exchange rate");
    }

    // ---- EntryPoint hooks ----

    /**
     * A signature by another key, over another chain or over any changed field is reported as SIG_VALIDATION_FAILED
     * (AA34), as ERC-4337 asks, and the other checks still run, so a stub signature exercises the whole validation and
     * postOp when a bundler estimates gas. A signature of the wrong length, a markup outside 1e6..2e6, a bad price, or
     * a sender holding too few tokens revert with a reason (AA33).
     *
     * maxCost is the EntryPoint's prefund (all five gas limits at maxFeePerGas, postOp's included), the most the
     * EntryPoint can take from the deposit for this operation; its token price is the most postOp will charge.
     *
     * Nothing here reads the clock (ERC-7562 bans TIMESTAMP in validation): a stale oracle price shortens the validity
     * window instead, so the EntryPoint refuses the operation (AA32) once updatedAt + maxPriceAge has passed.
     */
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        view
        override
        returns (bytes memory context, uint256 validationData)
    {
        _requireFromEntryPoint();
        (FeeTerms memory terms, bytes calldata signature) = _parse(userOp.paymasterAndData);
        require(signature.length == SIGNATURE_LENGTH, "TokenPaymasterV07: signature must be 65 bytes (r,s,v)");
        bool sigFailed = !_signedByASigner(getHash(userOp, terms), signature);

        require(
            terms.priceMarkup >= MIN_PRICE_MARKUP && terms.priceMarkup <= MAX_PRICE_MARKUP,
            "TokenPaymasterV07: priceMarkup must be 1e6 to 2e6 (millionths)"
        );
        require(terms.feeToken != address(0), "TokenPaymasterV07: fee token is zero");
        (uint256 rate, uint48 validUntil) = _rateAndExpiry(terms);

        uint256 maxTokenCost = tokenAmount(maxCost, rate, terms.priceMarkup);
        // The balance only: the allowance usually comes from an approve in the operation's own batch.
        require(
            IERC20(terms.feeToken).balanceOf(userOp.sender) >= maxTokenCost,
            "TokenPaymasterV07: fee token balance below the maximum charge"
        );

        context = abi.encode(
            ChargeContext({
                sender: userOp.sender,
                feeToken: terms.feeToken,
                exchangeRate: rate,
                priceMarkup: terms.priceMarkup,
                maxTokenCost: maxTokenCost,
                userOpHash: userOpHash
            })
        );
        return (context, _packValidationData(sigFailed, validUntil, terms.validAfter));
    }

    /**
     * Charges actualGasCost + POST_OP_OVERHEAD_GAS at the fee per gas the operation paid, in tokens, in both modes the
     * EntryPoint calls it with (opSucceeded, opReverted: the EntryPoint charges gas in both). A failed pull reverts
     * with the token's reason: the EntryPoint then reverts the execution, emits PostOpRevertReason with that reason,
     * and takes the gas from this contract's deposit anyway. That is not a bundle failure on v0.7 and v0.8 (unlike
     * v0.6's second postOp), so reverting is safe for the bundler, and it undoes whatever the execution did to dodge
     * the charge.
     */
    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)
        external
        override
    {
        _requireFromEntryPoint();
        (mode); // both modes are charged alike
        ChargeContext memory charge = abi.decode(context, (ChargeContext));
        uint256 gasCost = actualGasCost + POST_OP_OVERHEAD_GAS * actualUserOpFeePerGas;
        uint256 amount = tokenAmount(gasCost, charge.exchangeRate, charge.priceMarkup);
        // The EntryPoint never takes more than the prefund, so neither do we.
        if (amount > charge.maxTokenCost) amount = charge.maxTokenCost;
        IERC20(charge.feeToken).safeTransferFrom(charge.sender, address(this), amount);
        emit TokenCharged(
            charge.sender, charge.feeToken, charge.userOpHash, amount, gasCost, charge.exchangeRate, charge.priceMarkup
        );
    }

    // ---- owner (signers: SignerSet): oracle age, tokens, deposit and stake ----

    function setMaxPriceAge(uint48 newMaxPriceAge) external onlyOwner {
        require(newMaxPriceAge > 0, "TokenPaymasterV07: maxPriceAge is zero");
        emit MaxPriceAgeChanged(maxPriceAge, newMaxPriceAge);
        maxPriceAge = newMaxPriceAge;
    }

    /// The collected fees (and anything sent here by mistake).
    function withdrawToken(IERC20 token, address to, uint256 amount) external onlyOwner {
        require(to != address(0), "TokenPaymasterV07: target is zero");
        token.safeTransfer(to, amount);
        emit TokensWithdrawn(address(token), to, amount);
    }

    /// Adds to this paymaster's EntryPoint deposit, which pays every operation's gas. Anyone may add; only the owner
    /// withdraws.
    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function withdrawTo(address payable target, uint256 amount) external onlyOwner {
        require(target != address(0), "TokenPaymasterV07: target is zero");
        entryPoint.withdrawTo(target, amount);
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    /// ERC-7562 lets only a staked paymaster return a context and read the aggregator's storage during validation.
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
        revert("TokenPaymasterV07: ownership cannot be renounced");
    }

    // ---- internals ----

    function _parse(bytes calldata paymasterAndData)
        private
        pure
        returns (FeeTerms memory terms, bytes calldata signature)
    {
        require(
            paymasterAndData.length >= SIGNATURE_OFFSET, "TokenPaymasterV07: paymasterAndData shorter than 245 bytes"
        );
        terms.priceSource = uint8(paymasterAndData[PRICE_SOURCE_OFFSET]);
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
            require(terms.exchangeRate > 0, "TokenPaymasterV07: exchange rate is zero");
            return (terms.exchangeRate, terms.validUntil);
        }
        require(
            terms.priceSource == PRICE_SOURCE_ORACLE,
            "TokenPaymasterV07: priceSource must be 0 (signed rate) or 1 (oracle)"
        );
        uint256 updatedAt;
        (rate, updatedAt) = oracleRate(terms.feeToken, terms.oracleAggregator);
        uint256 priceUntil = updatedAt + maxPriceAge;
        if (priceUntil > type(uint48).max) priceUntil = type(uint48).max;
        // validUntil 0 means no end (EntryPoint semantics), so the price's end always applies then.
        validUntil = terms.validUntil == 0 || priceUntil < terms.validUntil ? uint48(priceUntil) : terms.validUntil;
    }

    function _requireFromEntryPoint() private view {
        require(msg.sender == address(entryPoint), "TokenPaymasterV07: sender not EntryPoint");
    }
}
